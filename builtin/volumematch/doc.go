// Package volumematch decides which PersistentVolume a claim may be bound
// to, by Kubernetes' rules (its volume controller's findBestMatchForClaim):
// the same storage class, every requested access mode, at least the requested
// storage, the same volume mode, the claim's selector matching the volume's
// labels, and, when the node is known, the volume's node affinity admitting
// it. The volume binder (builtin/controllers/volumebinder) binds with it;
// the scheduler's VolumeBinding plugin keeps a pod of a claim that waits for
// its first consumer off the nodes where no volume would match.
package volumematch
