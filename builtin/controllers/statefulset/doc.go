// Package statefulset is the built-in StatefulSet controller
// (kube-controller-manager's statefulset controller semantics, our own
// implementation).
//
// Pods have stable names "<statefulset>-<ordinal>" for ordinals
// [ordinals.start, ordinals.start+replicas), hostname = pod name, subdomain =
// serviceName, and the labels statefulset.kubernetes.io/pod-name,
// apps.kubernetes.io/pod-index and controller-revision-hash. With OrderedReady
// pod management, ordinal i+1 is created only when 0..i are Running, Ready
// and available (ready for minReadySeconds), and scale-down deletes the highest ordinal first, one at a time,
// halting while a pod above the first unhealthy one (replicas in ascending
// order, then the condemned) is not Running, Ready and available, as
// Kubernetes does; Parallel creates and deletes them all at once. Failed pods are deleted and
// recreated under the same name.
//
// Revisions: every distinct template is a ControllerRevision
// "<statefulset>-<hash>" (or an owned revision of the same data under another
// name, internal/history.Ensure); status.updateRevision is the current template's,
// status.currentRevision the one the set converged on. RollingUpdate replaces
// pods from the highest ordinal down to spec.updateStrategy.rollingUpdate.
// partition while fewer than rollingUpdate.maxUnavailable replicas (an int or
// a percentage of replicas rounded up; 1 by default) are unavailable — missing,
// terminating, not Running and Ready, or ready for less than minReadySeconds —
// so by default one at a time and only while every pod is available; ordinals
// below the partition keep (and are recreated from) the current revision.
// OnDelete only gives recreated pods the update revision.
//
// volumeClaimTemplates: for each template and ordinal the controller creates a
// PersistentVolumeClaim "<template>-<statefulset>-<ordinal>" before the pod
// and mounts it through the pod's volume of the template's name, like
// Kubernetes. The volumebinder controller binds each claim once its pod is
// scheduled and the node agent materialises it as a directory on that node
// (docs/runtimes.md, Volumes).
// persistentVolumeClaimRetentionPolicy works through owner references, as in
// Kubernetes (the garbage collector does the deleting): whenDeleted=Delete
// makes the StatefulSet own the claims of the ordinals in range;
// whenScaled=Delete makes a pod removed by a scale-down own its claims (so they
// go once it is gone; a scale-up before that takes them back); Retain drops
// the reference. A policy change updates the existing claims
// (statefulset_claims.go).
//
// Status reports replicas, readyReplicas, availableReplicas (ready for
// minReadySeconds), currentReplicas, updatedReplicas, both revisions,
// collisionCount and observedGeneration; terminating pods count as replicas
// (and ready) until they are gone, never as current or updated, as in
// Kubernetes. The reconciler is level-based: each run derives the next
// step from the StatefulSet and its pods as they are now.
package statefulset
