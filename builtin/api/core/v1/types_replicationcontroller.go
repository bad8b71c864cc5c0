package v1

import "github.com/converge-dev/converge/framework/api"

// ReplicationControllerSpec is the desired state of a ReplicationController.
type ReplicationControllerSpec struct {
	// Replicas is the number of desired pods (default 1).
	Replicas        *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	MinReadySeconds int32  `json:"minReadySeconds,omitempty" protobuf:"varint,4,opt,name=minReadySeconds"`
	// Selector is an equality-based label query (default: the template's labels).
	Selector map[string]string `json:"selector,omitempty" mapType:"atomic" protobuf:"bytes,2,rep,name=selector"`
	Template *PodTemplateSpec  `json:"template,omitempty" protobuf:"bytes,3,opt,name=template"`
}

// ReplicationControllerConditionType names a ReplicationController condition.
type ReplicationControllerConditionType string

// ReplicationControllerReplicaFailure is true while creating or deleting pods fails.
const ReplicationControllerReplicaFailure ReplicationControllerConditionType = "ReplicaFailure"

// ReplicationControllerCondition is one condition of a ReplicationController.
type ReplicationControllerCondition struct {
	Type               ReplicationControllerConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=ReplicationControllerConditionType"`
	Status             ConditionStatus                    `json:"status" protobuf:"bytes,2,opt,name=status,casttype=ConditionStatus"`
	LastTransitionTime api.Time                           `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string                             `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string                             `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// ReplicationControllerStatus is the observed state of a ReplicationController.
type ReplicationControllerStatus struct {
	Replicas             int32                            `json:"replicas" protobuf:"varint,1,opt,name=replicas"`
	FullyLabeledReplicas int32                            `json:"fullyLabeledReplicas,omitempty" protobuf:"varint,2,opt,name=fullyLabeledReplicas"`
	ReadyReplicas        int32                            `json:"readyReplicas,omitempty" protobuf:"varint,4,opt,name=readyReplicas"`
	AvailableReplicas    int32                            `json:"availableReplicas,omitempty" protobuf:"varint,5,opt,name=availableReplicas"`
	ObservedGeneration   int64                            `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	Conditions           []ReplicationControllerCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,6,rep,name=conditions"`
}

// ReplicationController keeps spec.replicas pods of its template running:
// the core/v1 predecessor of apps/v1 ReplicaSet, with an equality-based
// selector. builtin/controllers/replicaset manages both.
type ReplicationController struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ReplicationControllerSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         ReplicationControllerStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ReplicationControllerList is a list of ReplicationControllers.
type ReplicationControllerList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ReplicationController `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// DefaultReplicationController applies Kubernetes' defaults: the selector and
// the object's labels default to the template's labels, replicas to 1, and
// the template gets the pod defaults.
func DefaultReplicationController(rc *ReplicationController) {
	if t := rc.Spec.Template; t != nil {
		if len(rc.Spec.Selector) == 0 && len(t.Labels) > 0 {
			rc.Spec.Selector = cloneStrings(t.Labels)
		}
		if len(rc.Labels) == 0 && len(t.Labels) > 0 {
			rc.Labels = cloneStrings(t.Labels)
		}
		DefaultPodTemplateSpec(t)
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = api.Ptr[int32](1)
	}
}

func cloneStrings(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
