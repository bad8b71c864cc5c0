// Package volumebinder is the built-in volume binder: it plays the parts of
// Kubernetes' PersistentVolume controller (static binding, reclaim, the
// storage object in-use protection finalizers) and of a local-path
// provisioner (rancher's local-path-provisioner) for PersistentVolumeClaims.
//
// # Static binding
//
// A pending claim is bound to the smallest Available PersistentVolume that
// satisfies it (package volumematch): the same storage class ("" matches volumes
// without one; a claim without a class gets the default StorageClass,
// written into its spec as Kubernetes' retroactive default assignment
// does), every requested access mode, at least the requested storage, the
// same volume mode, labels its selector matches. A volume pre-bound to the
// claim by spec.claimRef comes first; a claim's own spec.volumeName binds it
// to that volume if it satisfies the claim. Binding (bind.go) writes the
// volume's claimRef with the claim's uid and phase Bound, then the claim's
// volumeName, the annotations pv.kubernetes.io/bind-completed and
// pv.kubernetes.io/bound-by-controller, and its status (phase Bound, the
// volume's capacity and access modes). Writes carry the resourceVersion read,
// so of claims racing for one volume exactly one gets it. For a class with
// volumeBindingMode WaitForFirstConsumer the claim waits for its first
// scheduled consumer and only volumes whose node affinity admits that node
// match; for Immediate binding the node affinity is ignored. A bound claim
// whose volume is gone becomes Lost.
//
// # Local directory volumes
//
// A claim no volume satisfies (unless its class is "" or a class whose
// provisioner is kubernetes.io/no-provisioner) stays Pending until a
// pod that uses it is scheduled. Then the claim is bound to a directory
// volume on that pod's node: the claim gets the annotation
// volume.kubernetes.io/selected-node (the node), the bind annotations,
// spec.volumeName "pvc-<claim uid>", and status phase Bound with the
// requested storage as capacity and the requested access modes. No
// PersistentVolume object is created: the node agent materialises the
// volume as the directory <root>/volumes/claims/<namespace>/<name>-<uid> on
// the selected node and removes it once the claim is deleted (reclaim policy
// Delete). Claims with a selector or volumeMode Block get a
// ProvisioningFailed event and stay Pending.
//
// # Volumes and reclaim
//
// A second reconciler (volumephase.go) keeps each PersistentVolume's phase
// (with lastPhaseTransitionTime): Available while no claim holds it (or it is
// pre-bound to a claim not bound yet), Bound while the claim its claimRef
// names (by uid) exists, Released once that claim is gone; a volume this
// controller bound to a claim that got another volume is unbound. A
// Released volume is reclaimed by its policy: Retain keeps it; Delete
// deletes a hostPath volume under /tmp (the object: the directory stays on
// its node), leaves CSI volumes and volumes of an external provisioner to
// it, and makes any other volume Failed with Kubernetes' message; Recycle,
// deprecated, runs no recycler pod and makes the volume Failed.
//
// # Protection
//
// Claims carry the kubernetes.io/pvc-protection finalizer, removed once a
// deleted claim is used by no scheduled, unfinished pod (protection.go);
// volumes carry kubernetes.io/pv-protection, removed once a deleted volume is
// no longer Bound.
package volumebinder
