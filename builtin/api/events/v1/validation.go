package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api/field"
)

// ValidateEvent checks an event created through events.k8s.io/v1 as
// Kubernetes does, on its core/v1 form (so errors name the core fields:
// message, involvedObject, firstTimestamp): every event's checks plus
// eventTime, reportingController, reportingInstance, action and reason
// required, type Normal or Warning, a valid series and no deprecated fields.
func ValidateEvent(e *Event) field.ErrorList {
	return corev1.ValidateEventStrict(ToCore(e))
}

// ValidateEventUpdate checks an update through events.k8s.io/v1: a changed
// series must be valid, and the rest but metadata cannot change.
func ValidateEventUpdate(e, old *Event) field.ErrorList {
	return corev1.ValidateEventStrictUpdate(ToCore(e), ToCore(old))
}
