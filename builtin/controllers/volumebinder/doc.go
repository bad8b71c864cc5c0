// Package volumebinder is the built-in local-path volume binder: it plays the
// parts of Kubernetes' PersistentVolume binder and of a local-path provisioner
// (rancher's local-path-provisioner) for PersistentVolumeClaims, with
// WaitForFirstConsumer semantics.
//
// A claim stays Pending until a pod that uses it is scheduled. Then the claim
// is bound to a directory volume on that pod's node: the claim gets the
// annotation volume.kubernetes.io/selected-node (the node), the bind
// annotations pv.kubernetes.io/bind-completed and bound-by-controller,
// spec.volumeName "pvc-<claim uid>", and status phase Bound with the requested
// storage as capacity and the requested access modes. No PersistentVolume
// object is created: the node agent materialises the volume as the directory
// <root>/volumes/claims/<namespace>/<name>-<uid> on the selected node and
// removes it once the claim is deleted (reclaim policy Delete). Claims with a
// selector or a pre-bound spec.volumeName cannot be provisioned this way; they
// get a ProvisioningFailed event and stay Pending.
//
// A second reconciler keeps the phase of PersistentVolume objects users
// create (with lastPhaseTransitionTime): Available while no claim holds the
// volume (or it is pre-bound by spec.claimRef to a claim not bound to it),
// Bound while the claim named by spec.claimRef has the volume as its
// spec.volumeName, Released once that claim is gone. It binds no claim to such
// a volume and reclaims no storage.
package volumebinder
