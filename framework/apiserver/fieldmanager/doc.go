// Package fieldmanager keeps the metadata.managedFields of objects and computes
// server-side apply, with Kubernetes' semantics: which manager owns which
// field, recorded per (manager, operation, apiVersion, subresource) as a
// FieldsV1 set in Kubernetes' encoding ("f:name", "k:{...}" for items of
// associative lists, "v:..." for set items, "i:N" otherwise, "." for the
// element itself).
//
// The sets, merges and conflicts are computed by sigs.k8s.io/structured-merge-diff
// (the library Kubernetes uses) over a schema this package derives from a Go
// type (TypeOf: json tags, patchStrategy/patchMergeKey, listType/listMapKeys,
// mapType/structType, default) or from a CRD's structural OpenAPI schema
// (TypeFromOpenAPI: x-kubernetes-list-type, -list-map-keys, -map-type,
// -preserve-unknown-fields, -int-or-string). Around the library, a Manager adds
// what Kubernetes' apiserver adds: manager identities, timestamps, metadata
// fields no one owns, merging of Update entries per manager, a cap on Update
// entries, ownership of fields written before the first apply
// ("before-first-apply"), and the client-side to server-side apply upgrade
// (conflicts that the last-applied-configuration annotation explains are not
// conflicts for the "kubectl" manager).
//
// A create is the exception: the manager owns exactly what the new object
// holds beyond the type's empty object, so its set is computed in one walk of
// the object over the schema (create.go), giving up to the library wherever
// the library would report an error or treat items specially; for the API
// server's creates the same walk writes the entry's bytes as it goes
// (emit.go). Tests and a fuzz target hold the three to the same bytes.
//
// Why the library rather than our own merge: Kubernetes computes managed
// fields, apply merges and conflicts with it, and clients compare those
// bytes and messages; it imports no k8s.io module. Its cost is kept down
// here: an Update compares the two objects once and moves ownership itself
// (no per-call schema reconciliation), parsed field sets are cached, and
// unchanged sets are written back as they were read.
//
// Objects are JSON maps as the API server holds them (map[string]any, []any,
// string, int64, float64, bool, nil). A Manager and a Type are immutable and
// safe for concurrent use.
package fieldmanager
