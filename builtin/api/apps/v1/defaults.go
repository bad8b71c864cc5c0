package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// DefaultDeployment applies Kubernetes' apps/v1 Deployment defaults: 1 replica,
// RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600,
// and the pod defaults of the template.
func DefaultDeployment(d *Deployment) {
	s := &d.Spec
	if s.Replicas == nil {
		s.Replicas = api.Ptr[int32](1)
	}
	if s.Strategy.Type == "" {
		s.Strategy.Type = RollingUpdateDeploymentStrategyType
	}
	if s.Strategy.Type == RollingUpdateDeploymentStrategyType {
		if s.Strategy.RollingUpdate == nil {
			s.Strategy.RollingUpdate = &RollingUpdateDeployment{}
		}
		ru := s.Strategy.RollingUpdate
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = api.Ptr(api.FromString("25%"))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = api.Ptr(api.FromString("25%"))
		}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = api.Ptr[int32](10)
	}
	if s.ProgressDeadlineSeconds == nil {
		s.ProgressDeadlineSeconds = api.Ptr[int32](600)
	}
	corev1.DefaultPodTemplateSpec(&s.Template)
}

// DefaultReplicaSet applies the ReplicaSet defaults: 1 replica and the pod
// defaults of the template.
func DefaultReplicaSet(rs *ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = api.Ptr[int32](1)
	}
	corev1.DefaultPodTemplateSpec(&rs.Spec.Template)
}

// DefaultStatefulSet applies the StatefulSet defaults: 1 replica, OrderedReady,
// RollingUpdate with partition 0, revisionHistoryLimit 10, claim retention
// Retain/Retain, the pod defaults of the template and the claim defaults of each
// volume claim template.
func DefaultStatefulSet(ss *StatefulSet) {
	s := &ss.Spec
	if s.PodManagementPolicy == "" {
		s.PodManagementPolicy = OrderedReadyPodManagement
	}
	if s.UpdateStrategy.Type == "" {
		s.UpdateStrategy.Type = RollingUpdateStatefulSetStrategyType
		if s.UpdateStrategy.RollingUpdate == nil {
			s.UpdateStrategy.RollingUpdate = &RollingUpdateStatefulSetStrategy{}
		}
	}
	if s.UpdateStrategy.Type == RollingUpdateStatefulSetStrategyType && s.UpdateStrategy.RollingUpdate != nil &&
		s.UpdateStrategy.RollingUpdate.Partition == nil {
		s.UpdateStrategy.RollingUpdate.Partition = api.Ptr[int32](0)
	}
	if s.PersistentVolumeClaimRetentionPolicy == nil {
		s.PersistentVolumeClaimRetentionPolicy = &StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if s.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		s.PersistentVolumeClaimRetentionPolicy.WhenDeleted = RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		s.PersistentVolumeClaimRetentionPolicy.WhenScaled = RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.Replicas == nil {
		s.Replicas = api.Ptr[int32](1)
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = api.Ptr[int32](10)
	}
	corev1.DefaultPodTemplateSpec(&s.Template)
	for i := range s.VolumeClaimTemplates {
		corev1.DefaultPersistentVolumeClaim(&s.VolumeClaimTemplates[i])
	}
}

// DefaultDaemonSet applies the DaemonSet defaults: RollingUpdate with
// maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10, and the pod defaults
// of the template.
func DefaultDaemonSet(ds *DaemonSet) {
	s := &ds.Spec
	if s.UpdateStrategy.Type == "" {
		s.UpdateStrategy.Type = RollingUpdateDaemonSetStrategyType
	}
	if s.UpdateStrategy.Type == RollingUpdateDaemonSetStrategyType {
		if s.UpdateStrategy.RollingUpdate == nil {
			s.UpdateStrategy.RollingUpdate = &RollingUpdateDaemonSet{}
		}
		ru := s.UpdateStrategy.RollingUpdate
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = api.Ptr(api.FromInt(1))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = api.Ptr(api.FromInt(0))
		}
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = api.Ptr[int32](10)
	}
	corev1.DefaultPodTemplateSpec(&s.Template)
}
