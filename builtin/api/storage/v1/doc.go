// Package v1 holds the storage.k8s.io/v1 kinds: StorageClass, CSIDriver,
// CSINode, CSIStorageCapacity (namespaced), VolumeAttachment (with a status
// subresource) and VolumeAttributesClass. Each has its Go type with
// Kubernetes' JSON and protobuf field names, defaulting where Kubernetes has
// it (StorageClass reclaim policy and binding mode, CSIDriver's spec),
// validation returning field errors (driver names, supported enums, the
// fields Kubernetes makes immutable) and registration with Kubernetes' short
// names and printer columns. The API objects only record intent: Converge
// runs no CSI drivers or attach/detach controller, so nothing acts on them.
package v1
