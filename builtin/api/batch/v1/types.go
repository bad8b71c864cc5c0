package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is batch/v1.
var GroupVersion = api.GroupVersion{Group: "batch", Version: "v1"}

// Well-known labels, annotations and finalizers of Jobs.
const (
	CronJobScheduledTimestampAnnotation   = "batch.kubernetes.io/cronjob-scheduled-timestamp"
	JobCompletionIndexAnnotation          = "batch.kubernetes.io/job-completion-index"
	JobTrackingFinalizer                  = "batch.kubernetes.io/job-tracking"
	JobNameLabel                          = "batch.kubernetes.io/job-name"
	ControllerUIDLabel                    = "batch.kubernetes.io/controller-uid"
	JobIndexFailureCountAnnotation        = "batch.kubernetes.io/job-index-failure-count"
	JobIndexIgnoredFailureCountAnnotation = "batch.kubernetes.io/job-index-ignored-failure-count"
	// LegacyJobNameLabel and LegacyControllerUIDLabel are the unprefixed labels
	// still set on pod templates.
	LegacyJobNameLabel       = "job-name"
	LegacyControllerUIDLabel = "controller-uid"
	// JobControllerName is the built-in value of spec.managedBy.
	JobControllerName = "kubernetes.io/job-controller"
)

// Job runs pods to completion.
type Job struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           JobSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         JobStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// JobList is a list of Jobs.
type JobList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Job `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// CompletionMode says how a Job's completions are tracked.
type CompletionMode string

// Completion modes.
const (
	NonIndexedCompletion CompletionMode = "NonIndexed"
	IndexedCompletion    CompletionMode = "Indexed"
)

// PodFailurePolicyAction is what a matching pod failure does.
type PodFailurePolicyAction string

// Pod failure policy actions.
const (
	PodFailurePolicyActionFailJob   PodFailurePolicyAction = "FailJob"
	PodFailurePolicyActionFailIndex PodFailurePolicyAction = "FailIndex"
	PodFailurePolicyActionIgnore    PodFailurePolicyAction = "Ignore"
	PodFailurePolicyActionCount     PodFailurePolicyAction = "Count"
)

// PodFailurePolicyOnExitCodesOperator relates exit codes to a rule's values.
type PodFailurePolicyOnExitCodesOperator string

// Exit code operators.
const (
	PodFailurePolicyOnExitCodesOpIn    PodFailurePolicyOnExitCodesOperator = "In"
	PodFailurePolicyOnExitCodesOpNotIn PodFailurePolicyOnExitCodesOperator = "NotIn"
)

// PodReplacementPolicy says when replacement pods are created.
type PodReplacementPolicy string

// Pod replacement policies.
const (
	TerminatingOrFailed PodReplacementPolicy = "TerminatingOrFailed"
	Failed              PodReplacementPolicy = "Failed"
)

// PodFailurePolicyOnExitCodesRequirement matches failed pods by exit code.
type PodFailurePolicyOnExitCodesRequirement struct {
	ContainerName *string                             `json:"containerName,omitempty" protobuf:"bytes,1,opt,name=containerName"`
	Operator      PodFailurePolicyOnExitCodesOperator `json:"operator" protobuf:"bytes,2,req,name=operator"`
	Values        []int32                             `json:"values" protobuf:"varint,3,rep,name=values"`
}

// PodFailurePolicyOnPodConditionsPattern matches failed pods by condition.
type PodFailurePolicyOnPodConditionsPattern struct {
	Type   corev1.PodConditionType `json:"type" protobuf:"bytes,1,req,name=type"`
	Status corev1.ConditionStatus  `json:"status" protobuf:"bytes,2,req,name=status"`
}

// PodFailurePolicyRule is one rule of a pod failure policy.
type PodFailurePolicyRule struct {
	Action          PodFailurePolicyAction                   `json:"action" protobuf:"bytes,1,req,name=action"`
	OnExitCodes     *PodFailurePolicyOnExitCodesRequirement  `json:"onExitCodes,omitempty" protobuf:"bytes,2,opt,name=onExitCodes"`
	OnPodConditions []PodFailurePolicyOnPodConditionsPattern `json:"onPodConditions,omitempty" protobuf:"bytes,3,opt,name=onPodConditions"`
}

// PodFailurePolicy decides what pod failures do to a Job.
type PodFailurePolicy struct {
	Rules []PodFailurePolicyRule `json:"rules" protobuf:"bytes,1,opt,name=rules"`
}

// SuccessPolicy declares when an indexed Job has succeeded.
type SuccessPolicy struct {
	Rules []SuccessPolicyRule `json:"rules" protobuf:"bytes,1,opt,name=rules"`
}

// SuccessPolicyRule is one success rule.
type SuccessPolicyRule struct {
	SucceededIndexes *string `json:"succeededIndexes,omitempty" protobuf:"bytes,1,opt,name=succeededIndexes"`
	SucceededCount   *int32  `json:"succeededCount,omitempty" protobuf:"varint,2,opt,name=succeededCount"`
}

// JobSpec is the desired state of a Job.
type JobSpec struct {
	Parallelism             *int32                 `json:"parallelism,omitempty" protobuf:"varint,1,opt,name=parallelism"`
	Completions             *int32                 `json:"completions,omitempty" protobuf:"varint,2,opt,name=completions"`
	ActiveDeadlineSeconds   *int64                 `json:"activeDeadlineSeconds,omitempty" protobuf:"varint,3,opt,name=activeDeadlineSeconds"`
	PodFailurePolicy        *PodFailurePolicy      `json:"podFailurePolicy,omitempty" protobuf:"bytes,11,opt,name=podFailurePolicy"`
	SuccessPolicy           *SuccessPolicy         `json:"successPolicy,omitempty" protobuf:"bytes,16,opt,name=successPolicy"`
	BackoffLimit            *int32                 `json:"backoffLimit,omitempty" protobuf:"varint,7,opt,name=backoffLimit"`
	BackoffLimitPerIndex    *int32                 `json:"backoffLimitPerIndex,omitempty" protobuf:"varint,12,opt,name=backoffLimitPerIndex"`
	MaxFailedIndexes        *int32                 `json:"maxFailedIndexes,omitempty" protobuf:"varint,13,opt,name=maxFailedIndexes"`
	Selector                *api.LabelSelector     `json:"selector,omitempty" protobuf:"bytes,4,opt,name=selector"`
	ManualSelector          *bool                  `json:"manualSelector,omitempty" protobuf:"varint,5,opt,name=manualSelector"`
	Template                corev1.PodTemplateSpec `json:"template" protobuf:"bytes,6,opt,name=template"`
	TTLSecondsAfterFinished *int32                 `json:"ttlSecondsAfterFinished,omitempty" protobuf:"varint,8,opt,name=ttlSecondsAfterFinished"`
	CompletionMode          *CompletionMode        `json:"completionMode,omitempty" protobuf:"bytes,9,opt,name=completionMode,casttype=CompletionMode"`
	Suspend                 *bool                  `json:"suspend,omitempty" protobuf:"varint,10,opt,name=suspend"`
	PodReplacementPolicy    *PodReplacementPolicy  `json:"podReplacementPolicy,omitempty" protobuf:"bytes,14,opt,name=podReplacementPolicy,casttype=podReplacementPolicy"`
	ManagedBy               *string                `json:"managedBy,omitempty" protobuf:"bytes,15,opt,name=managedBy"`
}

// JobStatus is the observed state of a Job.
type JobStatus struct {
	Conditions              []JobCondition           `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
	StartTime               *api.Time                `json:"startTime,omitempty" protobuf:"bytes,2,opt,name=startTime"`
	CompletionTime          *api.Time                `json:"completionTime,omitempty" protobuf:"bytes,3,opt,name=completionTime"`
	Active                  int32                    `json:"active,omitempty" protobuf:"varint,4,opt,name=active"`
	Succeeded               int32                    `json:"succeeded,omitempty" protobuf:"varint,5,opt,name=succeeded"`
	Failed                  int32                    `json:"failed,omitempty" protobuf:"varint,6,opt,name=failed"`
	Terminating             *int32                   `json:"terminating,omitempty" protobuf:"varint,11,opt,name=terminating"`
	CompletedIndexes        string                   `json:"completedIndexes,omitempty" protobuf:"bytes,7,opt,name=completedIndexes"`
	FailedIndexes           *string                  `json:"failedIndexes,omitempty" protobuf:"bytes,10,opt,name=failedIndexes"`
	UncountedTerminatedPods *UncountedTerminatedPods `json:"uncountedTerminatedPods,omitempty" protobuf:"bytes,8,opt,name=uncountedTerminatedPods"`
	Ready                   *int32                   `json:"ready,omitempty" protobuf:"varint,9,opt,name=ready"`
}

// UncountedTerminatedPods are finished pods not yet counted in the status.
type UncountedTerminatedPods struct {
	Succeeded []string `json:"succeeded,omitempty" protobuf:"bytes,1,rep,name=succeeded,casttype=k8s.io/apimachinery/pkg/types.UID"`
	Failed    []string `json:"failed,omitempty" protobuf:"bytes,2,rep,name=failed,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

// JobConditionType names a Job condition.
type JobConditionType string

// Job conditions.
const (
	JobSuspended          JobConditionType = "Suspended"
	JobComplete           JobConditionType = "Complete"
	JobFailed             JobConditionType = "Failed"
	JobFailureTarget      JobConditionType = "FailureTarget"
	JobSuccessCriteriaMet JobConditionType = "SuccessCriteriaMet"
)

// Job condition reasons.
const (
	JobReasonPodFailurePolicy         = "PodFailurePolicy"
	JobReasonBackoffLimitExceeded     = "BackoffLimitExceeded"
	JobReasonDeadlineExceeded         = "DeadlineExceeded"
	JobReasonMaxFailedIndexesExceeded = "MaxFailedIndexesExceeded"
	JobReasonFailedIndexes            = "FailedIndexes"
	JobReasonSuccessPolicy            = "SuccessPolicy"
	JobReasonCompletionsReached       = "CompletionsReached"
)

// JobCondition is one condition of a Job.
type JobCondition struct {
	Type               JobConditionType       `json:"type" protobuf:"bytes,1,opt,name=type,casttype=JobConditionType"`
	Status             corev1.ConditionStatus `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	LastProbeTime      api.Time               `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	LastTransitionTime api.Time               `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string                 `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	Message            string                 `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// JobTemplateSpec is the Job a CronJob creates.
type JobTemplateSpec struct {
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           JobSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// CronJob creates Jobs on a schedule.
type CronJob struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           CronJobSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         CronJobStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// CronJobList is a list of CronJobs.
type CronJobList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []CronJob `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	Schedule                   string            `json:"schedule" protobuf:"bytes,1,opt,name=schedule"`
	TimeZone                   *string           `json:"timeZone,omitempty" protobuf:"bytes,8,opt,name=timeZone"`
	StartingDeadlineSeconds    *int64            `json:"startingDeadlineSeconds,omitempty" protobuf:"varint,2,opt,name=startingDeadlineSeconds"`
	ConcurrencyPolicy          ConcurrencyPolicy `json:"concurrencyPolicy,omitempty" protobuf:"bytes,3,opt,name=concurrencyPolicy,casttype=ConcurrencyPolicy"`
	Suspend                    *bool             `json:"suspend,omitempty" protobuf:"varint,4,opt,name=suspend"`
	JobTemplate                JobTemplateSpec   `json:"jobTemplate" protobuf:"bytes,5,opt,name=jobTemplate"`
	SuccessfulJobsHistoryLimit *int32            `json:"successfulJobsHistoryLimit,omitempty" protobuf:"varint,6,opt,name=successfulJobsHistoryLimit"`
	FailedJobsHistoryLimit     *int32            `json:"failedJobsHistoryLimit,omitempty" protobuf:"varint,7,opt,name=failedJobsHistoryLimit"`
}

// ConcurrencyPolicy says what a CronJob does when a run is due while another runs.
type ConcurrencyPolicy string

// Concurrency policies.
const (
	AllowConcurrent   ConcurrencyPolicy = "Allow"
	ForbidConcurrent  ConcurrencyPolicy = "Forbid"
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronJobStatus is the observed state of a CronJob.
type CronJobStatus struct {
	Active             []corev1.ObjectReference `json:"active,omitempty" protobuf:"bytes,1,rep,name=active"`
	LastScheduleTime   *api.Time                `json:"lastScheduleTime,omitempty" protobuf:"bytes,4,opt,name=lastScheduleTime"`
	LastSuccessfulTime *api.Time                `json:"lastSuccessfulTime,omitempty" protobuf:"bytes,5,opt,name=lastSuccessfulTime"`
}
