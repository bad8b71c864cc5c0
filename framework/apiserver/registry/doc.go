// Package registry describes the resources an API server serves: names and scope
// for discovery, the Strategy that canonicalises, defaults and validates objects,
// subresources, selectable fields and printer columns. Built-in kinds register
// typed strategies (see Typed); the CRD registry registers dynamic ones. The
// apiserver reads a Registry; it knows no concrete kind.
//
// A Registry is safe for concurrent use: resources may be added and removed while
// the server runs (CRDs come and go).
package registry
