// Package lifecycle runs the CRD lifecycle: it watches CustomResourceDefinitions
// in storage, checks their names, installs one registry entry per served version,
// reports NamesAccepted/Established (and Terminating) through the API's /status
// endpoint, and on deletion removes the custom resources, the registry entries and
// the cleanup finalizer.
//
// # Why it is not a framework controller
//
// Built-in controllers and operators read through the informer cache and write
// through a client (see builtin/controllers). This one differs on purpose,
// because it is part of the API server rather than a client of it, as
// kube-apiserver's own apiextensions controllers are:
//   - It installs and removes registry entries, which must happen in the API
//     server's process before any client can reach the new resource, and
//     before the server answers its first request after a restart. So it runs
//     with the server (controlplane starts it before listening) and reads the
//     CRDs from storage, not through an informer over HTTP that would need the
//     server to be listening already.
//   - Its status and finalizer writes go through the server's in-process
//     handler as the server itself (system:masters), so they pass admission,
//     validation and the status subresource's rules like any write, without a
//     network client, a certificate or RBAC of its own.
//   - Deleting a CRD's objects removes them from storage directly, as
//     kube-apiserver's CRD finalizer does through its own storage layer.
package lifecycle
