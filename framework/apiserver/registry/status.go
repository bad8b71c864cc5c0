package registry

import (
	"context"

	"github.com/converge-dev/converge/framework/api/field"
)

// StatusValidator is an optional Strategy extension for resources whose status
// subresource validates writes differently from the main resource, as
// Kubernetes' status strategies do (a Job's status write runs
// ValidateJobUpdateStatus, not ValidateJobUpdate).
//
// For a write through the status subresource (PUT or PATCH .../status) the
// server calls ValidateStatusUpdate instead of ValidateUpdate; metadata is
// validated by the server in both cases, and everything but metadata and status
// has already been reset from old. A strategy that does not implement it keeps
// ValidateUpdate for status writes.
type StatusValidator interface {
	// ValidateStatusUpdate checks a status update of old to obj.
	ValidateStatusUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList
}

var _ StatusValidator = Typed[struct{}]{}

// ValidateStatusUpdate implements StatusValidator: ValidateStatusUpdateFunc
// when set, else ValidateUpdate (the behaviour of a strategy without status
// validation).
//
// A strategy that embeds Typed and overrides ValidateUpdate must override
// ValidateStatusUpdate too, or set ValidateStatusUpdateFunc: this method calls
// Typed's own ValidateUpdate.
func (s Typed[T]) ValidateStatusUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if s.ValidateStatusUpdateFunc == nil {
		return s.ValidateUpdate(ctx, obj, old)
	}
	return validateTypedUpdate(obj, old, s.ValidateStatusUpdateFunc)
}
