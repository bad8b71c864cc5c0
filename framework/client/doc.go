// Package client reads and writes API objects on a Kubernetes-compatible API
// server: Get, List, Create, Update, Patch, Delete, DeleteAllOf, Watch, the
// status subresource (Status()) and other subresources (SubResource("scale")).
//
// Objects are either typed Go structs registered in a scheme.Scheme (their kind
// comes from the Scheme, or from TypeMeta when set) or *api.Unstructured /
// *api.UnstructuredList (their kind comes from apiVersion/kind, which the caller
// must set). The kind is mapped to a REST resource by a RESTMapper, by default
// one learnt lazily from the server's discovery (restmapper).
//
// Contract:
//   - Objects travel as JSON. After every successful write (Create, Update, Patch,
//     Status().Update/Patch, SubResource writes) the object passed in is replaced
//     by the server's answer, so it carries the new resourceVersion, uid, etc.
//     A failed call leaves it unchanged. Delete and DeleteAllOf do not modify it.
//   - Server errors are returned as *errors.StatusError (package
//     framework/api/errors): test them with errors.IsNotFound, IsConflict, ...;
//     IgnoreNotFound helps in reconcilers. Client-side problems (unregistered
//     type, unknown kind, encoding) are plain wrapped errors.
//   - Nothing is cached: every call is one request (plus discovery on a mapper
//     miss, plus bounded retries as documented in package rest).
//   - Watch returns a Watcher whose channel yields typed events until the stream
//     ends, Stop is called or the context ends; then the channel is closed.
//
// A Client is safe for concurrent use. Build one from a rest.Config, which
// package kubeconfig loads from a kubeconfig file, the environment or the
// in-cluster service account.
package client
