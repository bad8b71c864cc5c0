package v1

import "github.com/converge-dev/converge/framework/api"

// PersistentVolume is a piece of storage in the cluster (cluster-scoped). It
// carries only the volume sources a Converge node can describe (hostPath,
// local, csi, nfs); other sources are unknown fields and refused.
type PersistentVolume struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PersistentVolumeSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         PersistentVolumeStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// PersistentVolumeList is a list of PersistentVolumes.
type PersistentVolumeList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PersistentVolume `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// PersistentVolumeSpec is the volume's capacity, source and binding.
type PersistentVolumeSpec struct {
	Capacity               ResourceList `json:"capacity,omitempty" protobuf:"bytes,1,rep,name=capacity,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	PersistentVolumeSource `json:",inline" protobuf:"bytes,2,opt,name=persistentVolumeSource"`
	// +listType=atomic
	AccessModes                   []PersistentVolumeAccessMode  `json:"accessModes,omitempty" protobuf:"bytes,3,rep,name=accessModes,casttype=PersistentVolumeAccessMode"`
	ClaimRef                      *ObjectReference              `json:"claimRef,omitempty" protobuf:"bytes,4,opt,name=claimRef"`
	PersistentVolumeReclaimPolicy PersistentVolumeReclaimPolicy `json:"persistentVolumeReclaimPolicy,omitempty" protobuf:"bytes,5,opt,name=persistentVolumeReclaimPolicy,casttype=PersistentVolumeReclaimPolicy"`
	StorageClassName              string                        `json:"storageClassName,omitempty" protobuf:"bytes,6,opt,name=storageClassName"`
	// +listType=atomic
	MountOptions              []string              `json:"mountOptions,omitempty" protobuf:"bytes,7,opt,name=mountOptions"`
	VolumeMode                *PersistentVolumeMode `json:"volumeMode,omitempty" protobuf:"bytes,8,opt,name=volumeMode,casttype=PersistentVolumeMode"`
	NodeAffinity              *VolumeNodeAffinity   `json:"nodeAffinity,omitempty" protobuf:"bytes,9,opt,name=nodeAffinity"`
	VolumeAttributesClassName *string               `json:"volumeAttributesClassName,omitempty" protobuf:"bytes,10,opt,name=volumeAttributesClassName"`
}

// PersistentVolumeSource is where the volume's data lives: exactly one of
// the fields is set.
type PersistentVolumeSource struct {
	HostPath *HostPathVolumeSource      `json:"hostPath,omitempty" protobuf:"bytes,3,opt,name=hostPath"`
	NFS      *NFSVolumeSource           `json:"nfs,omitempty" protobuf:"bytes,5,opt,name=nfs"`
	Local    *LocalVolumeSource         `json:"local,omitempty" protobuf:"bytes,20,opt,name=local"`
	CSI      *CSIPersistentVolumeSource `json:"csi,omitempty" protobuf:"bytes,22,opt,name=csi"`
}

// LocalVolumeSource is a directory or block device local to one node.
type LocalVolumeSource struct {
	Path   string  `json:"path" protobuf:"bytes,1,opt,name=path"`
	FSType *string `json:"fsType,omitempty" protobuf:"bytes,2,opt,name=fsType"`
}

// CSIPersistentVolumeSource is a volume of an external CSI driver.
type CSIPersistentVolumeSource struct {
	Driver                     string            `json:"driver" protobuf:"bytes,1,opt,name=driver"`
	VolumeHandle               string            `json:"volumeHandle" protobuf:"bytes,2,opt,name=volumeHandle"`
	ReadOnly                   bool              `json:"readOnly,omitempty" protobuf:"varint,3,opt,name=readOnly"`
	FSType                     string            `json:"fsType,omitempty" protobuf:"bytes,4,opt,name=fsType"`
	VolumeAttributes           map[string]string `json:"volumeAttributes,omitempty" protobuf:"bytes,5,rep,name=volumeAttributes"`
	ControllerPublishSecretRef *SecretReference  `json:"controllerPublishSecretRef,omitempty" protobuf:"bytes,6,opt,name=controllerPublishSecretRef"`
	NodeStageSecretRef         *SecretReference  `json:"nodeStageSecretRef,omitempty" protobuf:"bytes,7,opt,name=nodeStageSecretRef"`
	NodePublishSecretRef       *SecretReference  `json:"nodePublishSecretRef,omitempty" protobuf:"bytes,8,opt,name=nodePublishSecretRef"`
	ControllerExpandSecretRef  *SecretReference  `json:"controllerExpandSecretRef,omitempty" protobuf:"bytes,9,opt,name=controllerExpandSecretRef"`
	NodeExpandSecretRef        *SecretReference  `json:"nodeExpandSecretRef,omitempty" protobuf:"bytes,10,opt,name=nodeExpandSecretRef"`
}

// SecretReference names a secret in any namespace.
type SecretReference struct {
	Name      string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,2,opt,name=namespace"`
}

// VolumeNodeAffinity is the nodes a volume can be reached from.
type VolumeNodeAffinity struct {
	Required *NodeSelector `json:"required,omitempty" protobuf:"bytes,1,opt,name=required"`
}

// TopologySelectorTerm is a set of topology label requirements (ANDed).
type TopologySelectorTerm struct {
	// +listType=atomic
	MatchLabelExpressions []TopologySelectorLabelRequirement `json:"matchLabelExpressions,omitempty" protobuf:"bytes,1,rep,name=matchLabelExpressions"`
}

// TopologySelectorLabelRequirement is a label key and its allowed values.
type TopologySelectorLabelRequirement struct {
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// +listType=atomic
	Values []string `json:"values" protobuf:"bytes,2,rep,name=values"`
}

// PersistentVolumeReclaimPolicy is what happens to a released volume; see the
// constants.
type PersistentVolumeReclaimPolicy string

// Values of PersistentVolumeReclaimPolicy.
const (
	PersistentVolumeReclaimRecycle PersistentVolumeReclaimPolicy = "Recycle"
	PersistentVolumeReclaimDelete  PersistentVolumeReclaimPolicy = "Delete"
	PersistentVolumeReclaimRetain  PersistentVolumeReclaimPolicy = "Retain"
)

// PersistentVolumePhase is the lifecycle phase of a volume; see the constants.
type PersistentVolumePhase string

// Values of PersistentVolumePhase.
const (
	VolumePending   PersistentVolumePhase = "Pending"
	VolumeAvailable PersistentVolumePhase = "Available"
	VolumeBound     PersistentVolumePhase = "Bound"
	VolumeReleased  PersistentVolumePhase = "Released"
	VolumeFailed    PersistentVolumePhase = "Failed"
)

// PersistentVolumeStatus is the observed state of a volume.
type PersistentVolumeStatus struct {
	Phase                   PersistentVolumePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=PersistentVolumePhase"`
	Message                 string                `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
	Reason                  string                `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
	LastPhaseTransitionTime *api.Time             `json:"lastPhaseTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastPhaseTransitionTime"`
}
