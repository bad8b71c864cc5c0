// Package volumebinding is the VolumeBinding scheduler plugin: a pod that
// uses a PersistentVolumeClaim whose volume lives on a node may only run on
// that node, like kube-scheduler's plugin of the same name with local
// (node-pinned) volumes.
//
// Claims are bound by the volumebinder controller (WaitForFirstConsumer):
// once a pod using a pending claim is scheduled, the claim gets the
// annotation volume.kubernetes.io/selected-node=<the pod's node>, which is
// where the node agent keeps its data. The plugin therefore:
//
//   - PreFilter: reads the claims of the pod's persistentVolumeClaim volumes
//     and of its ephemeral volumes (the claim "<pod>-<volume>", which must be
//     controlled by the pod) from the scheduler's PersistentVolumeClaim
//     informer. A claim that is missing, Lost, being deleted or (ephemeral)
//     not owned by the pod makes the pod UnschedulableAndUnresolvable with
//     Kubernetes' message (`persistentvolumeclaim "data" not found`,
//     `persistentvolumeclaim "data" is being deleted`, ...). The node of every
//     claim that has selected-node is remembered; a pod without claims, or
//     whose claims are all unbound, skips Filter (unbound claims put no
//     constraint: the binder binds them to the chosen node afterwards).
//     A claim bound to a PersistentVolume object (spec.volumeName other than
//     "pvc-<uid>", read from the PersistentVolume informer) contributes its
//     volume's required node affinity.
//   - Filter: a node other than the claims' node, or one the node affinity
//     of a claim's PersistentVolume does not admit, is
//     UnschedulableAndUnresolvable "node(s) had volume node affinity
//     conflict" (every node is, when the pod's claims live on different
//     nodes). An unbound claim of a WaitForFirstConsumer class whose
//     provisioner is kubernetes.io/no-provisioner (pre-created local
//     volumes; read from the StorageClass informer) admits only the nodes
//     where a PersistentVolume matches it (volumematch, the binder's rules,
//     node affinity included): elsewhere "node(s) didn't find available
//     persistent volumes to bind", as kube-scheduler's FindPodVolumes. Each
//     claim is matched on its own (two claims of a pod may count the same
//     volume), and a volume created later does not requeue the pod (a claim
//     or node event, or the periodic flush, does). Claims of other classes
//     put no constraint: the binder gives them a local directory volume
//     where the pod lands when no volume matches there.
//   - Reserve: the pod's unbound claims are reserved for its node in memory
//     until the binder's selected-node shows up in the informer (or the claim
//     is deleted, the pod's binding fails, or DefaultAssumeTTL passes), and
//     PreFilter treats a reservation like selected-node: consumers scheduled
//     before the binder acts follow the first one instead of being spread
//     (kube-scheduler's assume cache plays this role).
//   - EventsToRegister: a PersistentVolumeClaim added or updated in the pod's
//     namespace with the name of one of its claims moves the pod back to the
//     active queue; so does a node being added or relabelled.
//
// A pod without claim volumes costs one scan of spec.volumes per cycle and
// nothing per node.
package volumebinding
