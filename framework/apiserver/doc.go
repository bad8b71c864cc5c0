// Package apiserver is Converge's generic Kubernetes-compatible REST server. It
// serves whatever a registry.Registry holds: discovery (/api, /apis), CRUD, list and
// watch, the three patch types and server-side apply (with managedFields kept on
// every write: fieldmanager), status and scale subresources, Table output,
// OpenAPI v3 and a minimal OpenAPI v2 (for kubectl 1.27), with errors as
// Kubernetes Status objects. It knows no concrete kind.
//
// The write path is: decode (JSON, YAML or Kubernetes protobuf) → canonicalize and
// default (Strategy) → validate (metadata generically, the rest by the Strategy) →
// prepare (uid, timestamps, generation, status/spec split) → admit (strategies
// that reserve things outside the object, registry.Admitter) → one storage
// transaction conditioned on the object's mod revision; registry.DeleteHook hears
// of deletions. A failed request changes nothing; a write whose stored bytes would not change commits nothing, so it
// neither bumps the resourceVersion nor emits a watch event.
//
// Reads go through a per-resource watch cache (one storage watch per resource,
// each event serialized once for every watcher of a version; see watchcache.go).
// Watchers read the cache's event ring directly, each with its own cursor, and are
// woken by a broadcast; one that falls a ring's length behind is closed and its
// client resumes or relists. Objects are stored as JSON with metadata first and
// without resourceVersion; the resourceVersion is the key's mod revision and is
// spliced in when read.
//
// Responses are JSON, except that a client preferring Kubernetes protobuf in its
// Accept header (client-go's default for built-in kinds) gets objects, lists and
// Scales of resources with a protobuf-encodable Go type in protobuf
// (protoresponse.go), and watch streams of them as length-prefixed WatchEvent
// messages (watchproto.go); Status, Table and custom resources stay JSON, as
// the Content-Type says.
//
// A resource with several versions (registry.Resource.Convert) is stored in its
// storage version; every read converts to the request's version (convert.go).
//
// Each Server has its own Prometheus registry, served at /metrics under
// kube-apiserver's metric names and labels (metrics.go), and serves
// /debug/pprof; both are non-resource paths that the Security filters
// authorize like any other. NewHTTPServer and Serve (serve.go) build the
// *http.Server with kube-apiserver's HTTP/2 limits.
package apiserver
