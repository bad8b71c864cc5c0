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
// Inputs are written as encoding/json writes them (sorted keys, HTML
// characters escaped), as Go clients, kubectl and the API server itself write
// them. Outside that, one difference remains: "test" compares strings by value
// where the library compares their JSON text, so "\u0041" and "A" differ there.
//
// Strategic merge patch is compared with k8s.io/apimachinery's strategicpatch on
// typed Pods and Deployments (a table and 5,000 random Pods and patches), after
// the typed round trip the API server makes, which is what clients read back.
package patchcompat
