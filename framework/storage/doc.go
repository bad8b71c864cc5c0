// Package storage defines the small key-value contract the API server persists
// objects through (get, create-if-absent, compare-and-swap update and delete on
// mod revision, consistent paginated list, watch from a revision, compaction),
// modelled on what kine showed an API server needs. Implementations live in
// sub-packages (etcd); storagetest holds the conformance suite every
// implementation must pass.
//
// Revisions are etcd revisions: one store-wide, strictly increasing counter. An
// object's resourceVersion is the mod revision of its key; a list's is the store
// revision it was read at.
package storage
