// Package statefulset is the built-in StatefulSet controller
// (kube-controller-manager's statefulset controller semantics, our own
// implementation).
//
// Pods have stable names "<statefulset>-<ordinal>" for ordinals
// [ordinals.start, ordinals.start+replicas), hostname = pod name, subdomain =
// serviceName, and the labels statefulset.kubernetes.io/pod-name,
// apps.kubernetes.io/pod-index and controller-revision-hash. With OrderedReady
// pod management, ordinal i+1 is created only when 0..i are Running and
// Ready, and scale-down deletes the highest ordinal first, one at a time;
// Parallel creates and deletes them all at once. Failed pods are deleted and
// recreated under the same name.
//
// Revisions: every distinct template is a ControllerRevision
// "<statefulset>-<hash>"; status.updateRevision is the current template's,
// status.currentRevision the one the set converged on. RollingUpdate replaces
// pods from the highest ordinal down to spec.updateStrategy.rollingUpdate.
// partition, one at a time and only while every pod is Running and Ready;
// ordinals below the partition keep (and are recreated from) the current
// revision. OnDelete only gives recreated pods the update revision.
//
// volumeClaimTemplates: for each template and ordinal the controller creates a
// PersistentVolumeClaim "<template>-<statefulset>-<ordinal>" before the pod
// and mounts it through the pod's volume of the template's name, like
// Kubernetes. Binding and provisioning are out of scope until the node agent
// (and a provisioner) land: claims stay Pending. persistentVolumeClaimRetentionPolicy
// is accepted: whenDeleted=Delete gives each claim an ownerReference to the
// StatefulSet (the garbage collector deletes them with it); whenScaled=Delete
// deletes the claims of ordinals removed by a scale-down; Retain keeps them.
//
// Status reports replicas, readyReplicas, availableReplicas (ready for
// minReadySeconds), currentReplicas, updatedReplicas, both revisions and
// observedGeneration. The reconciler is level-based: each run derives the next
// step from the StatefulSet and its pods as they are now.
package statefulset
