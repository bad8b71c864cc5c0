// Package disruption is the disruption controller (Kubernetes' of the same
// name): it keeps the status of every policy/v1 PodDisruptionBudget, which
// eviction (pods/eviction) and preemption consult.
//
// For a budget it selects the pods of its namespace that match spec.selector
// (a null selector selects none, an empty one all) and computes:
//
//   - expectedPods and desiredHealthy: with an integer minAvailable, the number
//     of selected pods and minAvailable; with a percentage minAvailable or any
//     maxUnavailable, the summed replicas of the pods' controllers
//     (ReplicationController, ReplicaSet or its Deployment, StatefulSet) and
//     minAvailable of it rounded up, or that minus maxUnavailable (rounded up,
//     at least 0). A selected pod without a supported controller is then an
//     error ("found no controllers for pod ...");
//   - currentHealthy: selected pods that are Ready, not being deleted and not
//     in disruptedPods;
//   - disruptionsAllowed: currentHealthy - desiredHealthy, at least 0 (0 when
//     expectedPods is 0);
//   - the DisruptionAllowed condition (True SufficientPods, False
//     InsufficientPods) and observedGeneration.
//
// disruptedPods (written by eviction: pods whose deletion is under way) loses
// entries for pods that are gone or being deleted, and entries older than
// DeletionTimeout (the eviction's delete never happened); the budget is
// reconciled again when the next entry expires. On an error the status says
// so fail-safe: disruptionsAllowed 0 and DisruptionAllowed False with reason
// SyncFailed.
package disruption
