// Package patchcompat checks that framework/patch applies JSON patches and
// merge patches exactly as the Kubernetes API server does, by running both it
// and gopkg.in/evanphx/json-patch.v4 (the library the API server and its
// admission webhooks use, configured as the API server configures it) on the
// same inputs: a table of the cases where they used to disagree, 40,000
// seeded random documents and patches, and two fuzz targets
// (FuzzJSONPatchAgainstEvanphx, FuzzMergePatchAgainstEvanphx). Both must
// succeed or both fail with the same HTTP status class, and a success must give
// the same JSON document.
//
// Documents are objects or arrays, as the API server's are; patches may write
// strings in any JSON form (the random cases rewrite some, the fuzz targets
// take anything), since "test" compares strings by their JSON text.
//
// Strategic merge patch is compared with k8s.io/apimachinery's strategicpatch on
// typed Pods and Deployments (a table and 5,000 random Pods and patches), after
// the typed round trip the API server makes, which is what clients read back.
package patchcompat
