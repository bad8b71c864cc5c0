// Package garbagecollector is the built-in garbage collector: it deletes objects
// whose owners are gone, following Kubernetes' ownerReferences semantics.
//
// It keeps a graph of every object of every resource the API server serves with
// the list, watch and delete verbs (built-in kinds and custom resources alike),
// discovered from /api and /apis and re-read periodically and whenever a
// CustomResourceDefinition changes, so new resources join without a restart.
// Each resource has its own metadata-only informer; the graph maps uids to
// objects and owners to dependents.
//
// The reconciler is level-based over object uids:
//   - Background: an object none of whose owners exists any more is deleted
//     (propagationPolicy Background, or as its own orphan/foregroundDeletion
//     finalizer asks). The decision is never taken on the graph, which may lag:
//     as Kubernetes' attemptToDeleteItem, the object itself is read live (its
//     uid must match; one being deleted or without ownerReferences is left
//     alone), its current ownerReferences are classified with a live GET of
//     each owner by uid (solid, dangling, waiting for dependents), and the
//     delete carries uid and resourceVersion preconditions, so a client (or the
//     collector's own orphaning) that changes the object meanwhile wins and
//     the decision is taken again. References to owners that are gone are
//     removed from objects that still have a live owner (dangling references),
//     with an update locked on the resourceVersion that was judged.
//   - Foreground: an owner with deletionTimestamp and the foregroundDeletion
//     finalizer has its dependents deleted; once no dependent with
//     blockOwnerDeletion: true remains, the finalizer is removed.
//     A dependent whose owners are all waiting and that has dependents goes in
//     the foreground too; when one of its own dependents is also waiting in the
//     foreground, an ownership cycle may close through it, so (as Kubernetes
//     does) its references to the waiting owners stop blocking first: the
//     owners then finish, and the cycle unwinds whichever member was deleted.
//   - Orphan: an owner with deletionTimestamp and the orphan finalizer has its
//     ownerReference removed from every dependent, then the finalizer removed.
//
// An ownerReference of a namespaced object names an owner in the same namespace
// or a cluster-scoped owner; one of a cluster-scoped object can only name a
// cluster-scoped owner (a namespaced owner kind is reported with an
// OwnerRefInvalidNamespace event and treated as absent).
package garbagecollector
