package api

// Status is the body of every API error and of some successful responses
// (deletes, bindings). Its shape follows Kubernetes' meta/v1 Status exactly.
type Status struct {
	TypeMeta `json:",inline"`
	Metadata ListMeta       `json:"metadata"`
	Status   string         `json:"status,omitempty"`
	Message  string         `json:"message,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Details  *StatusDetails `json:"details,omitempty"`
	Code     int32          `json:"code,omitempty"`
}

// StatusDetails names the object an error is about and lists the causes.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason for an error, usually a field-level validation failure.
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Status values.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// DeleteOptions are the options of a DELETE request.
type DeleteOptions struct {
	TypeMeta           `json:",inline"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty" protobuf:"varint,1,opt,name=gracePeriodSeconds"`
	Preconditions      *Preconditions `json:"preconditions,omitempty" protobuf:"bytes,2,opt,name=preconditions"`
	OrphanDependents   *bool          `json:"orphanDependents,omitempty" protobuf:"varint,3,opt,name=orphanDependents"`
	PropagationPolicy  *string        `json:"propagationPolicy,omitempty" protobuf:"bytes,4,opt,name=propagationPolicy"`
	DryRun             []string       `json:"dryRun,omitempty" protobuf:"bytes,5,rep,name=dryRun"`
	// IgnoreStoreReadErrorWithClusterBreakingPotential is accepted and ignored.
	IgnoreStoreReadErrorWithClusterBreakingPotential *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential,omitempty" protobuf:"varint,6,opt,name=ignoreStoreReadErrorWithClusterBreakingPotential"`
}

// Preconditions must hold for a delete to proceed.
type Preconditions struct {
	UID             *string `json:"uid,omitempty" protobuf:"bytes,1,opt,name=uid"`
	ResourceVersion *string `json:"resourceVersion,omitempty" protobuf:"bytes,2,opt,name=resourceVersion"`
}

// Propagation policies for DeleteOptions.
const (
	DeletePropagationOrphan     = "Orphan"
	DeletePropagationBackground = "Background"
	DeletePropagationForeground = "Foreground"
)

// Well-known finalizers.
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
)

// WatchEvent is one event of a watch stream.
type WatchEvent struct {
	Type   string       `json:"type"`
	Object RawExtension `json:"object"`
}

// Watch event types.
const (
	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
	EventBookmark = "BOOKMARK"
	EventError    = "ERROR"
)
