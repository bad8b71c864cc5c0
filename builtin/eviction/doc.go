// Package eviction serves pods/NAME/eviction (policy/v1 Eviction) the way
// Kubernetes does: a delete of the pod that respects its PodDisruptionBudget.
//
//   - A pod that is being deleted, Pending, Succeeded or Failed is deleted
//     without consulting budgets.
//   - With no budget selecting the pod, it is deleted; with more than one, the
//     eviction fails (500, "This pod has more than one PodDisruptionBudget,
//     which the eviction subresource does not support.").
//   - An unready pod is deleted without spending the budget when its
//     unhealthyPodEvictionPolicy is AlwaysAllow, or (IfHealthyBudget, the
//     default) when the budget is met (currentHealthy >= desiredHealthy > 0).
//   - Otherwise the budget must be current (observedGeneration >= generation)
//     and allow a disruption: then disruptionsAllowed is decremented and the
//     pod recorded in disruptedPods (the disruption controller drops it once
//     the pod is gone) in one conditional write of the budget, retried on
//     conflict, before the pod is deleted with the eviction's DeleteOptions.
//     Refusals are 429 TooManyRequests with a cause of type DisruptionBudget
//     ("Cannot evict pod as it would violate the pod's disruption budget.");
//     a negative disruptionsAllowed or more than 2000 unconfirmed disruptions
//     are 403.
//
// Before the delete the pod gets the condition DisruptionTarget=True (reason
// EvictionByEvictionAPI), as in Kubernetes, so that a Job's pod failure
// policy can ignore evictions; the delete's preconditions are checked first
// and a resourceVersion precondition follows that write.
//
// Budgets are read and written in the API server's storage directly, as
// Kubernetes' eviction REST handler does; a dry run checks the budget and
// writes nothing.
package eviction
