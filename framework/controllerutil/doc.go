// Package controllerutil holds the small operations most reconcilers need:
// finalizers, owner references, create-or-update of a desired object and status
// conditions.
//
// Contract:
//
//   - The finalizer and owner-reference functions only change the object in
//     memory; the caller writes it (Update or Patch). They report whether they
//     changed anything, so a reconciler can skip no-op writes.
//   - SetControllerReference refuses (ErrAlreadyOwned) to add a second
//     controlling owner, and refuses owners the garbage collector could not
//     follow (cluster-scoped objects with namespaced owners, owners in another
//     namespace).
//   - CreateOrUpdate and CreateOrPatch read the live object, apply a mutate
//     function and write only when the result differs, reporting what happened
//     as an OperationResult. mutate must not change the name or namespace.
//     Conflicts are returned: the reconciler's retry is the retry loop.
//   - SetStatusCondition changes lastTransitionTime only when the status of the
//     condition changes (or the condition is new), so that time means "since
//     when is it so".
package controllerutil
