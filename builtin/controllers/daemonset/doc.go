// Package daemonset is the built-in DaemonSet controller
// (kube-controller-manager's daemon controller semantics, our own
// implementation).
//
// For every DaemonSet it runs one pod on each eligible Node. A node is eligible
// when it matches the template's nodeSelector and required node affinity
// (matchExpressions on labels with In/NotIn/Exists/DoesNotExist/Gt/Lt, and
// matchFields on metadata.name) and every NoSchedule/NoExecute taint is
// tolerated — by the template's tolerations or the ones Kubernetes adds to
// every daemon pod (not-ready and unreachable NoExecute; disk-pressure,
// memory-pressure, pid-pressure and unschedulable NoSchedule;
// network-unavailable NoSchedule for hostNetwork pods). A pod on a node that
// no longer matches, or whose NoExecute taint is not tolerated, is deleted (a
// new NoSchedule taint alone leaves a running pod in place, as in Kubernetes).
//
// Like Kubernetes, the controller does not set spec.nodeName: each pod gets a
// required node affinity term with matchFields metadata.name=<node> and the
// scheduler binds it. Until Converge's scheduler runs, pods stay pending
// unless something binds them (the tests use pods/binding).
//
// Revisions: each distinct template is stored as a ControllerRevision named
// "<daemonset>-<hash>" whose data is Kubernetes' replace patch of the
// template byte for byte (clients match revisions to the DaemonSet by these
// bytes); an owned revision of the same data under another name stands for
// the template too. Pods carry the revision's hash in the
// controller-revision-hash label. Updates follow spec.updateStrategy: RollingUpdate replaces old pods
// within maxUnavailable (delete first) or maxSurge (create the new pod next to
// the old one, delete the old one once the new one is available); OnDelete
// only gives new pods the new template. Old revisions beyond
// revisionHistoryLimit that no pod uses are deleted.
//
// Failed daemon pods are deleted (event FailedDaemonPod) and replaced; the
// deletions on one node back off exponentially (1 s doubling to 15 min, like
// Kubernetes) so a node that keeps failing the pod does not make the
// controller spin. Succeeded daemon pods are deleted (event
// SucceededDaemonPod) and replaced. Status
// reports desired/current/misscheduled/ready/available/updated counts and
// observedGeneration; it is computed from the pods found at the start of a
// reconcile, and every pod change triggers another one.
package daemonset
