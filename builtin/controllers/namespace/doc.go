// Package namespace is the built-in namespace lifecycle controller: it empties
// a namespace that is being deleted and then lets it go, like Kubernetes'
// namespace controller.
//
// When a Namespace has a deletionTimestamp, the controller sets status.phase
// Terminating, discovers every namespaced resource (custom resources
// included), deletes the namespace's objects of each (deletecollection when
// served, else list and delete) — pods first, and the rest only once no pod
// remains (Kubernetes' OrderedNamespaceDeletion: a running pod keeps the
// ConfigMaps, Secrets and ServiceAccounts it uses; while pods remain,
// NamespaceDeletionContentFailure says so) — and reports progress in the conditions
// NamespaceDeletionDiscoveryFailure, NamespaceDeletionContentFailure,
// NamespaceContentRemaining and NamespaceFinalizersRemaining. Objects with
// finalizers stay until someone removes them; the namespace waits. Once
// nothing remains it removes the "kubernetes" finalizer from spec.finalizers
// through namespaces/NAME/finalize; the API server then removes the namespace.
package namespace
