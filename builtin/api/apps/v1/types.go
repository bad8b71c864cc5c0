package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is apps/v1.
var GroupVersion = api.GroupVersion{Group: "apps", Version: "v1"}

// Well-known labels and annotations of the apps kinds.
const (
	ControllerRevisionHashLabelKey = "controller-revision-hash"
	StatefulSetRevisionLabel       = ControllerRevisionHashLabelKey
	DeprecatedRollbackTo           = "deprecated.deployment.rollback.to"
	DeprecatedTemplateGeneration   = "deprecated.daemonset.template.generation"
	// DaemonSetTemplateGenerationKey labels a DaemonSet's pods with its
	// template generation (DeprecatedTemplateGeneration) when they were made.
	DaemonSetTemplateGenerationKey = "pod-template-generation"
	StatefulSetPodNameLabel        = "statefulset.kubernetes.io/pod-name"
	PodIndexLabel                  = "apps.kubernetes.io/pod-index"
	// DefaultDeploymentUniqueLabelKey is added to ReplicaSets and pods of a Deployment.
	DefaultDeploymentUniqueLabelKey = "pod-template-hash"
	// DefaultDaemonSetUniqueLabelKey is added to pods of a DaemonSet.
	DefaultDaemonSetUniqueLabelKey = ControllerRevisionHashLabelKey
)

// StatefulSet runs pods with stable identities and storage.
type StatefulSet struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           StatefulSetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         StatefulSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// PodManagementPolicyType says how a StatefulSet creates and deletes pods.
type PodManagementPolicyType string

// Pod management policies.
const (
	OrderedReadyPodManagement PodManagementPolicyType = "OrderedReady"
	ParallelPodManagement     PodManagementPolicyType = "Parallel"
)

// StatefulSetUpdateStrategy says how a StatefulSet rolls out template changes.
type StatefulSetUpdateStrategy struct {
	Type          StatefulSetUpdateStrategyType     `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=StatefulSetStrategyType"`
	RollingUpdate *RollingUpdateStatefulSetStrategy `json:"rollingUpdate,omitempty" protobuf:"bytes,2,opt,name=rollingUpdate"`
}

// StatefulSetUpdateStrategyType names a StatefulSet update strategy.
type StatefulSetUpdateStrategyType string

// StatefulSet update strategies.
const (
	RollingUpdateStatefulSetStrategyType StatefulSetUpdateStrategyType = "RollingUpdate"
	OnDeleteStatefulSetStrategyType      StatefulSetUpdateStrategyType = "OnDelete"
)

// RollingUpdateStatefulSetStrategy parameterises a StatefulSet rolling update.
type RollingUpdateStatefulSetStrategy struct {
	Partition      *int32           `json:"partition,omitempty" protobuf:"varint,1,opt,name=partition"`
	MaxUnavailable *api.IntOrString `json:"maxUnavailable,omitempty" protobuf:"varint,2,opt,name=maxUnavailable"`
}

// PersistentVolumeClaimRetentionPolicyType says what happens to claims from
// volumeClaimTemplates.
type PersistentVolumeClaimRetentionPolicyType string

// Claim retention policies.
const (
	RetainPersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Retain"
	DeletePersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Delete"
)

// StatefulSetPersistentVolumeClaimRetentionPolicy says what happens to claims
// when the set is deleted or scaled down.
type StatefulSetPersistentVolumeClaimRetentionPolicy struct {
	WhenDeleted PersistentVolumeClaimRetentionPolicyType `json:"whenDeleted,omitempty" protobuf:"bytes,1,opt,name=whenDeleted,casttype=PersistentVolumeClaimRetentionPolicyType"`
	WhenScaled  PersistentVolumeClaimRetentionPolicyType `json:"whenScaled,omitempty" protobuf:"bytes,2,opt,name=whenScaled,casttype=PersistentVolumeClaimRetentionPolicyType"`
}

// StatefulSetOrdinals sets the first replica ordinal.
type StatefulSetOrdinals struct {
	Start int32 `json:"start" protobuf:"varint,1,opt,name=start"`
}

// StatefulSetSpec is the desired state of a StatefulSet.
type StatefulSetSpec struct {
	Replicas                             *int32                                           `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	Selector                             *api.LabelSelector                               `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	Template                             corev1.PodTemplateSpec                           `json:"template" protobuf:"bytes,3,opt,name=template"`
	VolumeClaimTemplates                 []corev1.PersistentVolumeClaim                   `json:"volumeClaimTemplates,omitempty" protobuf:"bytes,4,rep,name=volumeClaimTemplates"`
	ServiceName                          string                                           `json:"serviceName" protobuf:"bytes,5,opt,name=serviceName"`
	PodManagementPolicy                  PodManagementPolicyType                          `json:"podManagementPolicy,omitempty" protobuf:"bytes,6,opt,name=podManagementPolicy,casttype=PodManagementPolicyType"`
	UpdateStrategy                       StatefulSetUpdateStrategy                        `json:"updateStrategy,omitempty" protobuf:"bytes,7,opt,name=updateStrategy"`
	RevisionHistoryLimit                 *int32                                           `json:"revisionHistoryLimit,omitempty" protobuf:"varint,8,opt,name=revisionHistoryLimit"`
	MinReadySeconds                      int32                                            `json:"minReadySeconds,omitempty" protobuf:"varint,9,opt,name=minReadySeconds"`
	PersistentVolumeClaimRetentionPolicy *StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty" protobuf:"bytes,10,opt,name=persistentVolumeClaimRetentionPolicy"`
	Ordinals                             *StatefulSetOrdinals                             `json:"ordinals,omitempty" protobuf:"bytes,11,opt,name=ordinals"`
}

// StatefulSetStatus is the observed state of a StatefulSet.
type StatefulSetStatus struct {
	ObservedGeneration int64                  `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	Replicas           int32                  `json:"replicas" protobuf:"varint,2,opt,name=replicas"`
	ReadyReplicas      int32                  `json:"readyReplicas,omitempty" protobuf:"varint,3,opt,name=readyReplicas"`
	CurrentReplicas    int32                  `json:"currentReplicas,omitempty" protobuf:"varint,4,opt,name=currentReplicas"`
	UpdatedReplicas    int32                  `json:"updatedReplicas,omitempty" protobuf:"varint,5,opt,name=updatedReplicas"`
	CurrentRevision    string                 `json:"currentRevision,omitempty" protobuf:"bytes,6,opt,name=currentRevision"`
	UpdateRevision     string                 `json:"updateRevision,omitempty" protobuf:"bytes,7,opt,name=updateRevision"`
	CollisionCount     *int32                 `json:"collisionCount,omitempty" protobuf:"varint,9,opt,name=collisionCount"`
	Conditions         []StatefulSetCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,10,rep,name=conditions"`
	AvailableReplicas  int32                  `json:"availableReplicas" protobuf:"varint,11,opt,name=availableReplicas"`
}

// StatefulSetConditionType names a StatefulSet condition.
type StatefulSetConditionType string

// StatefulSetCondition is one condition of a StatefulSet.
type StatefulSetCondition struct {
	Type               StatefulSetConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=StatefulSetConditionType"`
	Status             corev1.ConditionStatus   `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	LastTransitionTime api.Time                 `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                   `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                   `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// StatefulSetList is a list of StatefulSets.
type StatefulSetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []StatefulSet `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Deployment declares replicated pods rolled out through ReplicaSets.
type Deployment struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           DeploymentSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         DeploymentStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// DeploymentSpec is the desired state of a Deployment.
type DeploymentSpec struct {
	Replicas                *int32                 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	Selector                *api.LabelSelector     `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	Template                corev1.PodTemplateSpec `json:"template" protobuf:"bytes,3,opt,name=template"`
	Strategy                DeploymentStrategy     `json:"strategy,omitempty" patchStrategy:"retainKeys" protobuf:"bytes,4,opt,name=strategy"`
	MinReadySeconds         int32                  `json:"minReadySeconds,omitempty" protobuf:"varint,5,opt,name=minReadySeconds"`
	RevisionHistoryLimit    *int32                 `json:"revisionHistoryLimit,omitempty" protobuf:"varint,6,opt,name=revisionHistoryLimit"`
	Paused                  bool                   `json:"paused,omitempty" protobuf:"varint,7,opt,name=paused"`
	ProgressDeadlineSeconds *int32                 `json:"progressDeadlineSeconds,omitempty" protobuf:"varint,9,opt,name=progressDeadlineSeconds"`
}

// DeploymentStrategy says how a Deployment replaces old pods with new ones.
type DeploymentStrategy struct {
	Type          DeploymentStrategyType   `json:"type,omitempty" protobuf:"bytes,1,opt,name=type,casttype=DeploymentStrategyType"`
	RollingUpdate *RollingUpdateDeployment `json:"rollingUpdate,omitempty" protobuf:"bytes,2,opt,name=rollingUpdate"`
}

// DeploymentStrategyType names a Deployment strategy.
type DeploymentStrategyType string

// Deployment strategies.
const (
	RecreateDeploymentStrategyType      DeploymentStrategyType = "Recreate"
	RollingUpdateDeploymentStrategyType DeploymentStrategyType = "RollingUpdate"
)

// RollingUpdateDeployment parameterises a rolling update.
type RollingUpdateDeployment struct {
	MaxUnavailable *api.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,1,opt,name=maxUnavailable"`
	MaxSurge       *api.IntOrString `json:"maxSurge,omitempty" protobuf:"bytes,2,opt,name=maxSurge"`
}

// DeploymentStatus is the observed state of a Deployment.
type DeploymentStatus struct {
	ObservedGeneration  int64                 `json:"observedGeneration,omitempty" protobuf:"varint,1,opt,name=observedGeneration"`
	Replicas            int32                 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	UpdatedReplicas     int32                 `json:"updatedReplicas,omitempty" protobuf:"varint,3,opt,name=updatedReplicas"`
	ReadyReplicas       int32                 `json:"readyReplicas,omitempty" protobuf:"varint,7,opt,name=readyReplicas"`
	AvailableReplicas   int32                 `json:"availableReplicas,omitempty" protobuf:"varint,4,opt,name=availableReplicas"`
	UnavailableReplicas int32                 `json:"unavailableReplicas,omitempty" protobuf:"varint,5,opt,name=unavailableReplicas"`
	TerminatingReplicas *int32                `json:"terminatingReplicas,omitempty" protobuf:"varint,9,opt,name=terminatingReplicas"`
	Conditions          []DeploymentCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,6,rep,name=conditions"`
	CollisionCount      *int32                `json:"collisionCount,omitempty" protobuf:"varint,8,opt,name=collisionCount"`
}

// DeploymentConditionType names a Deployment condition.
type DeploymentConditionType string

// Deployment conditions.
const (
	DeploymentAvailable      DeploymentConditionType = "Available"
	DeploymentProgressing    DeploymentConditionType = "Progressing"
	DeploymentReplicaFailure DeploymentConditionType = "ReplicaFailure"
)

// DeploymentCondition is one condition of a Deployment.
type DeploymentCondition struct {
	Type               DeploymentConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=DeploymentConditionType"`
	Status             corev1.ConditionStatus  `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	LastUpdateTime     api.Time                `json:"lastUpdateTime,omitempty" protobuf:"bytes,6,opt,name=lastUpdateTime"`
	LastTransitionTime api.Time                `json:"lastTransitionTime,omitempty" protobuf:"bytes,7,opt,name=lastTransitionTime"`
	Reason             string                  `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                  `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// DeploymentList is a list of Deployments.
type DeploymentList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Deployment `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// DaemonSetUpdateStrategy says how a DaemonSet rolls out template changes.
type DaemonSetUpdateStrategy struct {
	Type          DaemonSetUpdateStrategyType `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
	RollingUpdate *RollingUpdateDaemonSet     `json:"rollingUpdate,omitempty" protobuf:"bytes,2,opt,name=rollingUpdate"`
}

// DaemonSetUpdateStrategyType names a DaemonSet update strategy.
type DaemonSetUpdateStrategyType string

// DaemonSet update strategies.
const (
	RollingUpdateDaemonSetStrategyType DaemonSetUpdateStrategyType = "RollingUpdate"
	OnDeleteDaemonSetStrategyType      DaemonSetUpdateStrategyType = "OnDelete"
)

// RollingUpdateDaemonSet parameterises a DaemonSet rolling update.
type RollingUpdateDaemonSet struct {
	MaxUnavailable *api.IntOrString `json:"maxUnavailable,omitempty" protobuf:"bytes,1,opt,name=maxUnavailable"`
	MaxSurge       *api.IntOrString `json:"maxSurge,omitempty" protobuf:"bytes,2,opt,name=maxSurge"`
}

// DaemonSetSpec is the desired state of a DaemonSet.
type DaemonSetSpec struct {
	Selector             *api.LabelSelector      `json:"selector" protobuf:"bytes,1,opt,name=selector"`
	Template             corev1.PodTemplateSpec  `json:"template" protobuf:"bytes,2,opt,name=template"`
	UpdateStrategy       DaemonSetUpdateStrategy `json:"updateStrategy,omitempty" protobuf:"bytes,3,opt,name=updateStrategy"`
	MinReadySeconds      int32                   `json:"minReadySeconds,omitempty" protobuf:"varint,4,opt,name=minReadySeconds"`
	RevisionHistoryLimit *int32                  `json:"revisionHistoryLimit,omitempty" protobuf:"varint,6,opt,name=revisionHistoryLimit"`
}

// DaemonSetStatus is the observed state of a DaemonSet.
type DaemonSetStatus struct {
	CurrentNumberScheduled int32                `json:"currentNumberScheduled" protobuf:"varint,1,opt,name=currentNumberScheduled"`
	NumberMisscheduled     int32                `json:"numberMisscheduled" protobuf:"varint,2,opt,name=numberMisscheduled"`
	DesiredNumberScheduled int32                `json:"desiredNumberScheduled" protobuf:"varint,3,opt,name=desiredNumberScheduled"`
	NumberReady            int32                `json:"numberReady" protobuf:"varint,4,opt,name=numberReady"`
	ObservedGeneration     int64                `json:"observedGeneration,omitempty" protobuf:"varint,5,opt,name=observedGeneration"`
	UpdatedNumberScheduled int32                `json:"updatedNumberScheduled,omitempty" protobuf:"varint,6,opt,name=updatedNumberScheduled"`
	NumberAvailable        int32                `json:"numberAvailable,omitempty" protobuf:"varint,7,opt,name=numberAvailable"`
	NumberUnavailable      int32                `json:"numberUnavailable,omitempty" protobuf:"varint,8,opt,name=numberUnavailable"`
	CollisionCount         *int32               `json:"collisionCount,omitempty" protobuf:"varint,9,opt,name=collisionCount"`
	Conditions             []DaemonSetCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,10,rep,name=conditions"`
}

// DaemonSetConditionType names a DaemonSet condition.
type DaemonSetConditionType string

// DaemonSetCondition is one condition of a DaemonSet.
type DaemonSetCondition struct {
	Type               DaemonSetConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=DaemonSetConditionType"`
	Status             corev1.ConditionStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	LastTransitionTime api.Time               `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                 `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                 `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// DaemonSet runs one pod per eligible node.
type DaemonSet struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           DaemonSetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         DaemonSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// DaemonSetList is a list of DaemonSets.
type DaemonSetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []DaemonSet `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ReplicaSet keeps a number of identical pods running.
type ReplicaSet struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ReplicaSetSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         ReplicaSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ReplicaSetList is a list of ReplicaSets.
type ReplicaSetList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ReplicaSet `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ReplicaSetSpec is the desired state of a ReplicaSet.
type ReplicaSetSpec struct {
	Replicas        *int32                 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	MinReadySeconds int32                  `json:"minReadySeconds,omitempty" protobuf:"varint,4,opt,name=minReadySeconds"`
	Selector        *api.LabelSelector     `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	Template        corev1.PodTemplateSpec `json:"template,omitempty" protobuf:"bytes,3,opt,name=template"`
}

// ReplicaSetStatus is the observed state of a ReplicaSet.
type ReplicaSetStatus struct {
	Replicas             int32                 `json:"replicas" protobuf:"varint,1,opt,name=replicas"`
	FullyLabeledReplicas int32                 `json:"fullyLabeledReplicas,omitempty" protobuf:"varint,2,opt,name=fullyLabeledReplicas"`
	ReadyReplicas        int32                 `json:"readyReplicas,omitempty" protobuf:"varint,4,opt,name=readyReplicas"`
	AvailableReplicas    int32                 `json:"availableReplicas,omitempty" protobuf:"varint,5,opt,name=availableReplicas"`
	TerminatingReplicas  *int32                `json:"terminatingReplicas,omitempty" protobuf:"varint,7,opt,name=terminatingReplicas"`
	ObservedGeneration   int64                 `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	Conditions           []ReplicaSetCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,6,rep,name=conditions"`
}

// ReplicaSetConditionType names a ReplicaSet condition.
type ReplicaSetConditionType string

// ReplicaSet conditions.
const (
	ReplicaSetReplicaFailure ReplicaSetConditionType = "ReplicaFailure"
)

// ReplicaSetCondition is one condition of a ReplicaSet.
type ReplicaSetCondition struct {
	Type               ReplicaSetConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=ReplicaSetConditionType"`
	Status             corev1.ConditionStatus  `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	LastTransitionTime api.Time                `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                  `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                  `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// ControllerRevision is an immutable snapshot of state data, used by
// StatefulSets and DaemonSets for rollbacks.
type ControllerRevision struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Data           api.RawExtension `json:"data,omitempty" protobuf:"bytes,2,opt,name=data"`
	Revision       int64            `json:"revision" protobuf:"varint,3,opt,name=revision"`
}

// ControllerRevisionList is a list of ControllerRevisions.
type ControllerRevisionList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ControllerRevision `json:"items" protobuf:"bytes,2,rep,name=items"`
}
