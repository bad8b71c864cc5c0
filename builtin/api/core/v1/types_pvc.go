package v1

import "github.com/converge-dev/converge/framework/api"

// PersistentVolumeClaim is a user's request for and claim to a persistent volume.
// Its spec type, PersistentVolumeClaimSpec, is shared with ephemeral volumes'
// claim templates (types_pod.go).
type PersistentVolumeClaim struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           PersistentVolumeClaimSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         PersistentVolumeClaimStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// PersistentVolumeClaimList is a list of PersistentVolumeClaim objects.
type PersistentVolumeClaimList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []PersistentVolumeClaim `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// PersistentVolumeClaimPhase is the lifecycle phase of a claim; see the constants.
type PersistentVolumeClaimPhase string

// Values of PersistentVolumeClaimPhase.
const (
	ClaimPending PersistentVolumeClaimPhase = "Pending"
	ClaimBound   PersistentVolumeClaimPhase = "Bound"
	ClaimLost    PersistentVolumeClaimPhase = "Lost"
)

// PersistentVolumeClaimConditionType is an enumeration; see the constants.
type PersistentVolumeClaimConditionType string

// Values of PersistentVolumeClaimConditionType.
const (
	PersistentVolumeClaimResizing                PersistentVolumeClaimConditionType = "Resizing"
	PersistentVolumeClaimFileSystemResizePending PersistentVolumeClaimConditionType = "FileSystemResizePending"
	PersistentVolumeClaimVolumeModifyVolumeError PersistentVolumeClaimConditionType = "ModifyVolumeError"
	PersistentVolumeClaimVolumeModifyingVolume   PersistentVolumeClaimConditionType = "ModifyingVolume"
)

// ClaimResourceStatus is the resize state of one resource of a claim; see the
// constants.
type ClaimResourceStatus string

// Values of ClaimResourceStatus.
const (
	PersistentVolumeClaimControllerResizeInProgress ClaimResourceStatus = "ControllerResizeInProgress"
	PersistentVolumeClaimControllerResizeFailed     ClaimResourceStatus = "ControllerResizeFailed"
	PersistentVolumeClaimNodeResizePending          ClaimResourceStatus = "NodeResizePending"
	PersistentVolumeClaimNodeResizeInProgress       ClaimResourceStatus = "NodeResizeInProgress"
	PersistentVolumeClaimNodeResizeFailed           ClaimResourceStatus = "NodeResizeFailed"
)

// PersistentVolumeClaimModifyVolumeStatus is the state of a ControllerModifyVolume
// operation; see the constants.
type PersistentVolumeClaimModifyVolumeStatus string

// Values of PersistentVolumeClaimModifyVolumeStatus.
const (
	PersistentVolumeClaimModifyVolumePending    PersistentVolumeClaimModifyVolumeStatus = "Pending"
	PersistentVolumeClaimModifyVolumeInProgress PersistentVolumeClaimModifyVolumeStatus = "InProgress"
	PersistentVolumeClaimModifyVolumeInfeasible PersistentVolumeClaimModifyVolumeStatus = "Infeasible"
)

// ModifyVolumeStatus is the status of a ControllerModifyVolume operation.
type ModifyVolumeStatus struct {
	TargetVolumeAttributesClassName string                                  `json:"targetVolumeAttributesClassName,omitempty" protobuf:"bytes,1,opt,name=targetVolumeAttributesClassName"`
	Status                          PersistentVolumeClaimModifyVolumeStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=PersistentVolumeClaimModifyVolumeStatus"`
}

// PersistentVolumeClaimCondition is a condition of a claim.
type PersistentVolumeClaimCondition struct {
	Type               PersistentVolumeClaimConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=PersistentVolumeClaimConditionType"`
	Status             ConditionStatus                    `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	LastProbeTime      api.Time                           `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	LastTransitionTime api.Time                           `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string                             `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	Message            string                             `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// PersistentVolumeClaimStatus is the observed state of a claim. Protobuf field 6
// (resizeStatus) is retired in Kubernetes.
type PersistentVolumeClaimStatus struct {
	Phase                            PersistentVolumeClaimPhase           `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=PersistentVolumeClaimPhase"`
	AccessModes                      []PersistentVolumeAccessMode         `json:"accessModes,omitempty" protobuf:"bytes,2,rep,name=accessModes,casttype=PersistentVolumeAccessMode"`
	Capacity                         ResourceList                         `json:"capacity,omitempty" protobuf:"bytes,3,rep,name=capacity,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Conditions                       []PersistentVolumeClaimCondition     `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,4,rep,name=conditions"`
	AllocatedResources               ResourceList                         `json:"allocatedResources,omitempty" protobuf:"bytes,5,rep,name=allocatedResources,casttype=ResourceList,castkey=ResourceName" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	AllocatedResourceStatuses        map[ResourceName]ClaimResourceStatus `json:"allocatedResourceStatuses,omitempty" protobuf:"bytes,7,rep,name=allocatedResourceStatuses" protobuf_key:"bytes,1,opt,name=key,casttype=ResourceName" protobuf_val:"bytes,2,opt,name=value,casttype=ClaimResourceStatus"`
	CurrentVolumeAttributesClassName *string                              `json:"currentVolumeAttributesClassName,omitempty" protobuf:"bytes,8,opt,name=currentVolumeAttributesClassName"`
	ModifyVolumeStatus               *ModifyVolumeStatus                  `json:"modifyVolumeStatus,omitempty" protobuf:"bytes,9,opt,name=modifyVolumeStatus"`
}
