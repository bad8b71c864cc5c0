// Package namespace is the built-in namespace lifecycle controller: it empties
// a namespace that is being deleted and then lets it go, like Kubernetes'
// namespace controller.
//
// When a Namespace has a deletionTimestamp, the controller sets status.phase
// Terminating, discovers every namespaced resource (custom resources
// included), deletes the namespace's objects of each (deletecollection when
// served, else list and delete), and reports progress in the conditions
// NamespaceDeletionDiscoveryFailure, NamespaceDeletionContentFailure,
// NamespaceContentRemaining and NamespaceFinalizersRemaining. Objects with
// finalizers stay until someone removes them; the namespace waits. Once
// nothing remains it removes the "kubernetes" finalizer from spec.finalizers
// (through namespaces/NAME/finalize when the API server serves it).
//
// Bridge: the API server deletes an object at once when its
// metadata.finalizers is empty, and a Namespace's "kubernetes" finalizer lives
// in spec.finalizers. Until the API server treats spec.finalizers as blocking
// (as Kubernetes' namespace strategy does), the controller adds
// BridgeFinalizer to metadata.finalizers of every active namespace whose spec
// carries "kubernetes", and removes it together with the spec finalizer.
package namespace
