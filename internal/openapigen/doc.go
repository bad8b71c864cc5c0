// Package openapigen generates the OpenAPI definitions of the built-in kinds
// (builtin/openapi/definitions.json) from their Go types: json tags say the
// property names and which are optional (omitempty, or +optional in the doc
// comment), doc comments become descriptions, the list and map tags that
// server-side apply reads become x-kubernetes-* extensions, and named structs
// become shared definitions under Kubernetes' names (io.k8s.api.apps.v1.Deployment,
// io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta, …) referred to by $ref.
//
// References are written as the bare definition name ({"$ref": "io.k8s…"});
// the API server makes them #/definitions/… (v2) or #/components/schemas/…
// (v3) when it publishes them; a definition with both "type" and "oneOf"
// (IntOrString, Quantity) keeps "type" in v2 and "oneOf" in v3. Run by `go generate ./builtin/openapi`; a test
// fails when the checked-in file is stale.
package openapigen
