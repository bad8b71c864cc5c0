// Package replicaset is the built-in ReplicaSet controller, with the semantics of
// kube-controller-manager's (pkg/controller/replicaset):
//
//   - It keeps spec.replicas active pods (not terminating, not Succeeded or
//     Failed) matching the selector: it creates missing pods in slow-start
//     batches (1, 2, 4, ...; a failed batch stops the rest) and deletes surplus
//     pods in Kubernetes' order of preference (podutil.SortForDeletion).
//   - Pods are created with generateName "<rs-name>-", the template's labels,
//     annotations and spec, and a controller ownerReference with
//     blockOwnerDeletion.
//   - Expectations: the creations and deletions issued for a ReplicaSet are
//     remembered until the pod informer shows them (or 5 minutes pass); until
//     then the ReplicaSet's pods are not managed again, so a slow cache never
//     causes double creations or deletions. Status is always updated.
//   - Adoption and release: orphan active pods matching the selector are
//     adopted (controller ownerReference) unless the ReplicaSet is being
//     deleted (checked against the live object first); owned pods that stop
//     matching are released (their ownerReference is removed).
//   - Status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
//     (ready for minReadySeconds; the key is requeued when the next pod becomes
//     available), observedGeneration and the ReplicaFailure condition while
//     creating or deleting pods fails.
//   - Events on the ReplicaSet: SuccessfulCreate, FailedCreate,
//     SuccessfulDelete, FailedDelete.
//
// SetupReplicationControllers runs the same reconciler for core/v1
// ReplicationControllers, as kube-controller-manager does: each is converted
// to a ReplicaSet (its selector as matchLabels), and owner references, status
// writes and events go to the ReplicationController.
//
// The reconciler is level based: it reads the ReplicaSet and pods from the
// shared informers and never looks at the event that woke it. The pod event
// handler only enqueues owners and records observations for expectations.
package replicaset
