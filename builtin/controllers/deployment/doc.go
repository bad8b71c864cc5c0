// Package deployment is the built-in Deployment controller, with the semantics
// of kube-controller-manager's (pkg/controller/deployment).
//
// A Deployment owns ReplicaSets (adopting orphans that match its selector,
// releasing owned ones that stop matching). The ReplicaSet whose template
// equals the Deployment's (ignoring the pod-template-hash label) is the new
// one; every other is old. A new ReplicaSet is named "<deployment>-<hash>"
// where hash (ComputeHash) is FNV-32a over the template's JSON and
// status.collisionCount, encoded like Kubernetes' SafeEncodeString; the hash
// is added as the pod-template-hash label to its labels, selector and
// template. A name clash with a ReplicaSet of another template bumps
// status.collisionCount.
//
// Annotations on ReplicaSets: deployment.kubernetes.io/revision (the new
// ReplicaSet gets max(old revisions)+1, also when an old ReplicaSet becomes
// new again on rollback; the previous value goes to revision-history),
// desired-replicas and max-replicas (replicas and replicas+maxSurge when the
// ReplicaSet was last scaled), and the Deployment's own annotations (e.g.
// kubernetes.io/change-cause, for `kubectl rollout history`). The Deployment
// carries the revision of its new ReplicaSet.
//
// Strategies:
//   - RollingUpdate: scale the new ReplicaSet up while the total stays within
//     replicas+maxSurge (percent rounded up), and old ones down while at least
//     replicas-maxUnavailable (percent rounded down) pods stay available;
//     unhealthy old pods go first.
//   - Recreate: scale old ReplicaSets to zero, wait until their pods are gone,
//     then create or scale up the new ReplicaSet.
//
// Scaling a Deployment (replicas differing from a ReplicaSet's
// desired-replicas annotation) resizes its active ReplicaSets in proportion
// to their sizes, within replicas+maxSurge. A paused Deployment is only
// scaled, never rolled out. Old ReplicaSets with zero replicas beyond
// revisionHistoryLimit are deleted (oldest revision first) once the rollout
// completes or while paused.
//
// Status: replicas, updatedReplicas, readyReplicas, availableReplicas,
// unavailableReplicas, observedGeneration, collisionCount, and the conditions
// Available (MinimumReplicasAvailable / MinimumReplicasUnavailable),
// Progressing (NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated,
// NewReplicaSetAvailable, ProgressDeadlineExceeded, DeploymentPaused,
// DeploymentResumed, ReplicaSetCreateError) and ReplicaFailure (copied from
// the ReplicaSets). The Deployment is requeued when its progress deadline
// would pass. Events: ScalingReplicaSet, ReplicaSetCreateError,
// ProgressDeadlineExceeded, SelectingAll.
//
// Rollback is client-side (`kubectl rollout undo` patches the template back
// to an old ReplicaSet's); the controller then finds that ReplicaSet as the
// new one and gives it the next revision.
package deployment
