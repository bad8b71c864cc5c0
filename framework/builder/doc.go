// Package builder wires a reconciler into a manager: it creates the controller,
// the informers of the watched kinds and their event handlers, and adds the
// controller to the manager.
//
//	err := builder.ControllerManagedBy(mgr).
//		For(builder.Kind[*v1.Widget](), predicate.GenerationChanged()).
//		Owns(builder.Kind[*corev1.ConfigMap]()).
//		Watches(builder.Kind[*corev1.Secret](), handler.EnqueueRequestsFromMapFunc(secretToWidgets)).
//		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
//		Complete(reconciler)
//
// Kinds are named by a type parameter (Kind[T]) so that every watch uses the
// manager's typed shared informer of T: one watch per kind and process, shared
// with any code that calls cache.InformerFor on the same SharedInformers.
//
//   - For(kind): events of the reconciled kind enqueue the object's own key.
//   - Owns(kind): events of a child kind enqueue the key of its controlling
//     owner of the For kind (ownerReferences with controller: true), so the
//     reconciler sees children created, changed or deleted.
//   - Watches(kind, handler): any other mapping, typically
//     handler.EnqueueRequestsFromMapFunc.
//
// Predicates given to For, Owns or Watches apply to that watch; WithEventFilter
// applies to all of them.
//
// The setters only record; Complete (or Build) validates everything at once
// and returns a single error joining every problem. A Builder is used once.
package builder
