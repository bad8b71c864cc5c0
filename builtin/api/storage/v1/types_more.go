package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// StorageClass describes a class of dynamically provisioned storage.
type StorageClass struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Provisioner names the volume plugin that provisions the class's
	// volumes (required, immutable).
	Provisioner string `json:"provisioner" protobuf:"bytes,2,opt,name=provisioner"`
	// Parameters are the provisioner's parameters (immutable).
	Parameters map[string]string `json:"parameters,omitempty" protobuf:"bytes,3,rep,name=parameters"`
	// ReclaimPolicy is Delete (the default) or Retain (immutable).
	ReclaimPolicy *corev1.PersistentVolumeReclaimPolicy `json:"reclaimPolicy,omitempty" protobuf:"bytes,4,opt,name=reclaimPolicy,casttype=k8s.io/api/core/v1.PersistentVolumeReclaimPolicy"`
	// MountOptions are the provisioned volumes' mount options.
	MountOptions []string `json:"mountOptions,omitempty" protobuf:"bytes,5,opt,name=mountOptions"`
	// AllowVolumeExpansion lets claims of the class grow.
	AllowVolumeExpansion *bool `json:"allowVolumeExpansion,omitempty" protobuf:"varint,6,opt,name=allowVolumeExpansion"`
	// VolumeBindingMode is Immediate (the default) or WaitForFirstConsumer
	// (immutable).
	VolumeBindingMode *VolumeBindingMode `json:"volumeBindingMode,omitempty" protobuf:"bytes,7,opt,name=volumeBindingMode"`
	// AllowedTopologies restricts where volumes may be provisioned.
	// +listType=atomic
	AllowedTopologies []corev1.TopologySelectorTerm `json:"allowedTopologies,omitempty" protobuf:"bytes,8,rep,name=allowedTopologies"`
}

// StorageClassList is a list of StorageClasses.
type StorageClassList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []StorageClass `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VolumeBindingMode says when claims of a class are bound; see the constants.
type VolumeBindingMode string

// Values of VolumeBindingMode.
const (
	VolumeBindingImmediate            VolumeBindingMode = "Immediate"
	VolumeBindingWaitForFirstConsumer VolumeBindingMode = "WaitForFirstConsumer"
)

// VolumeAttachment asks for a volume to be attached to (or detached from) a
// node.
type VolumeAttachment struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           VolumeAttachmentSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status         VolumeAttachmentStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// VolumeAttachmentList is a list of VolumeAttachments.
type VolumeAttachmentList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []VolumeAttachment `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VolumeAttachmentSpec is the attacher, the volume and the node (immutable).
type VolumeAttachmentSpec struct {
	Attacher string                 `json:"attacher" protobuf:"bytes,1,opt,name=attacher"`
	Source   VolumeAttachmentSource `json:"source" protobuf:"bytes,2,opt,name=source"`
	NodeName string                 `json:"nodeName" protobuf:"bytes,3,opt,name=nodeName"`
}

// VolumeAttachmentSource is the volume to attach: a PersistentVolume by name,
// or an inline CSI volume source (exactly one).
type VolumeAttachmentSource struct {
	PersistentVolumeName *string                      `json:"persistentVolumeName,omitempty" protobuf:"bytes,1,opt,name=persistentVolumeName"`
	InlineVolumeSpec     *corev1.PersistentVolumeSpec `json:"inlineVolumeSpec,omitempty" protobuf:"bytes,2,opt,name=inlineVolumeSpec"`
}

// VolumeAttachmentStatus is the attacher's report.
type VolumeAttachmentStatus struct {
	Attached           bool              `json:"attached" protobuf:"varint,1,opt,name=attached"`
	AttachmentMetadata map[string]string `json:"attachmentMetadata,omitempty" protobuf:"bytes,2,rep,name=attachmentMetadata"`
	AttachError        *VolumeError      `json:"attachError,omitempty" protobuf:"bytes,3,opt,name=attachError,casttype=VolumeError"`
	DetachError        *VolumeError      `json:"detachError,omitempty" protobuf:"bytes,4,opt,name=detachError,casttype=VolumeError"`
}

// VolumeError is an attach or detach error.
type VolumeError struct {
	Time      api.Time `json:"time,omitempty" protobuf:"bytes,1,opt,name=time"`
	Message   string   `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
	ErrorCode *int32   `json:"errorCode,omitempty" protobuf:"varint,3,opt,name=errorCode"`
}

// CSIDriver describes a CSI volume driver installed in the cluster.
type CSIDriver struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           CSIDriverSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// CSIDriverList is a list of CSIDrivers.
type CSIDriverList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []CSIDriver `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// CSIDriverSpec is how Kubernetes works with the driver.
type CSIDriverSpec struct {
	AttachRequired *bool `json:"attachRequired,omitempty" protobuf:"varint,1,opt,name=attachRequired"`
	PodInfoOnMount *bool `json:"podInfoOnMount,omitempty" protobuf:"bytes,2,opt,name=podInfoOnMount"`
	// +listType=set
	VolumeLifecycleModes []VolumeLifecycleMode `json:"volumeLifecycleModes,omitempty" protobuf:"bytes,3,opt,name=volumeLifecycleModes"`
	StorageCapacity      *bool                 `json:"storageCapacity,omitempty" protobuf:"bytes,4,opt,name=storageCapacity"`
	FSGroupPolicy        *FSGroupPolicy        `json:"fsGroupPolicy,omitempty" protobuf:"bytes,5,opt,name=fsGroupPolicy"`
	// +listType=atomic
	TokenRequests                      []TokenRequest `json:"tokenRequests,omitempty" protobuf:"bytes,6,opt,name=tokenRequests"`
	RequiresRepublish                  *bool          `json:"requiresRepublish,omitempty" protobuf:"varint,7,opt,name=requiresRepublish"`
	SELinuxMount                       *bool          `json:"seLinuxMount,omitempty" protobuf:"varint,8,opt,name=seLinuxMount"`
	NodeAllocatableUpdatePeriodSeconds *int64         `json:"nodeAllocatableUpdatePeriodSeconds,omitempty" protobuf:"varint,9,opt,name=nodeAllocatableUpdatePeriodSeconds"`
}

// VolumeLifecycleMode is Persistent or Ephemeral; see the constants.
type VolumeLifecycleMode string

// Values of VolumeLifecycleMode.
const (
	VolumeLifecyclePersistent VolumeLifecycleMode = "Persistent"
	VolumeLifecycleEphemeral  VolumeLifecycleMode = "Ephemeral"
)

// FSGroupPolicy says whether the driver's volumes support fsGroup changes;
// see the constants.
type FSGroupPolicy string

// Values of FSGroupPolicy.
const (
	ReadWriteOnceWithFSTypeFSGroupPolicy FSGroupPolicy = "ReadWriteOnceWithFSType"
	FileFSGroupPolicy                    FSGroupPolicy = "File"
	NoneFSGroupPolicy                    FSGroupPolicy = "None"
)

// TokenRequest is a service account token the driver wants on mount.
type TokenRequest struct {
	Audience          string `json:"audience" protobuf:"bytes,1,opt,name=audience"`
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty" protobuf:"varint,2,opt,name=expirationSeconds"`
}

// CSIStorageCapacity is the capacity a CSI driver reports for a storage class
// in a topology segment.
type CSIStorageCapacity struct {
	api.TypeMeta      `json:",inline"`
	api.ObjectMeta    `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	NodeTopology      *api.LabelSelector `json:"nodeTopology,omitempty" protobuf:"bytes,2,opt,name=nodeTopology"`
	StorageClassName  string             `json:"storageClassName" protobuf:"bytes,3,opt,name=storageClassName"`
	Capacity          *api.Quantity      `json:"capacity,omitempty" protobuf:"bytes,4,opt,name=capacity"`
	MaximumVolumeSize *api.Quantity      `json:"maximumVolumeSize,omitempty" protobuf:"bytes,5,opt,name=maximumVolumeSize"`
}

// CSIStorageCapacityList is a list of CSIStorageCapacities.
type CSIStorageCapacityList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []CSIStorageCapacity `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VolumeAttributesClass is a set of mutable volume attributes a CSI driver
// applies.
type VolumeAttributesClass struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	DriverName     string            `json:"driverName" protobuf:"bytes,2,opt,name=driverName"`
	Parameters     map[string]string `json:"parameters,omitempty" protobuf:"bytes,3,rep,name=parameters"`
}

// VolumeAttributesClassList is a list of VolumeAttributesClasses.
type VolumeAttributesClassList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []VolumeAttributesClass `json:"items" protobuf:"bytes,2,rep,name=items"`
}
