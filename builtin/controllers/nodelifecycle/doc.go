// Package nodelifecycle is the node lifecycle controller: it watches Nodes and
// their heartbeat Leases (kube-node-lease/<node>) and, like Kubernetes'
// pkg/controller/nodelifecycle together with the taint-eviction controller,
// marks silent nodes unknown, taints unhealthy nodes and evicts the pods that
// do not tolerate the taints.
//
// Per node, on every reconcile (level-based: the outcome depends only on the
// Node, its Lease, its pods and the clock):
//
//  1. Health. The last heartbeat is the later of the Lease's renewTime and the
//     Ready condition's lastHeartbeatTime (a node that never reported gets
//     NodeStartupGracePeriod from its creation). When it is older than
//     NodeMonitorGracePeriod, Ready and the other conditions the node reports
//     (MemoryPressure, DiskPressure, PIDPressure; the missing ones are added)
//     become Unknown with reason NodeStatusUnknown and message "Kubelet
//     stopped posting node status." (NodeStatusNeverUpdated for conditions
//     never reported), and a NodeNotReady event is recorded on the Node. While
//     Ready is not True, the Ready condition of the node's pods is set to
//     False with a NodeNotReady event on each pod, as kube-controller-manager
//     does. The controller never sets Ready back: the node does, by posting
//     Ready=True (and renewing its Lease).
//  2. Taints. Ready=Unknown gives node.kubernetes.io/unreachable, Ready=False
//     gives node.kubernetes.io/not-ready, each with effects NoSchedule and
//     NoExecute (NoExecute with timeAdded); Ready=True removes both (event
//     NodeReady). NoSchedule is applied at once; adding a NoExecute taint to a
//     node that has none is rate-limited per zone (topology.kubernetes.io/zone):
//     EvictionRate nodes/s normally (default 0.1, burst 1) and
//     SecondaryEvictionRate (default 0.01) when more than 2 nodes and at least
//     UnhealthyZoneThreshold (55%) of the zone's nodes are not Ready. Swapping
//     not-ready for unreachable is not limited.
//     Simplifications (documented divergences): Kubernetes also stops
//     NoExecute tainting entirely when every zone is fully disrupted (it
//     assumes the control plane is cut off) and uses rate 0 in partially
//     disrupted zones of small clusters (<= 50 nodes); this controller does
//     neither, so a single failed node in a one-node test cluster is handled.
//  3. Eviction (the taint manager). A pod bound to the node that does not
//     tolerate one of its NoExecute taints is evicted at once; a pod that
//     tolerates them all is evicted when the shortest tolerationSeconds of the
//     tolerations used has passed since the taint's timeAdded (never, without
//     tolerationSeconds). Before evicting, the TaintManagerEviction event
//     "Marking for deletion Pod ns/name" is recorded on the pod and a
//     DisruptionTarget condition (reason DeletionByTaintManager) added to its
//     status; a scheduled eviction that is no longer due because the taint went
//     away records "Cancelling deletion of Pod ns/name".
//     The eviction uses the pods/eviction subresource and falls back to a
//     delete when the API server does not serve it (404/405) or refuses it
//     because of a disruption budget (429): taint eviction is not a voluntary
//     disruption, and Kubernetes' taint manager deletes pods directly.
//
// The reconcile requeues itself for the moment the node's heartbeat expires
// and for the next toleration deadline, so no periodic resync is needed.
package nodelifecycle
