package v1

import (
	"fmt"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// Length limits of the fields of events that carry an eventTime (the
// events.k8s.io form), as in Kubernetes.
const (
	EventReportingInstanceLengthLimit = 128
	EventActionLengthLimit            = 128
	EventReasonLengthLimit            = 128
	EventNoteLengthLimit              = 1024
)

// ValidateEvent is Kubernetes' validation of every event, whichever API wrote
// it (its legacyValidateEvent): an event without eventTime lives in its
// object's namespace (or default, for cluster-scoped objects); one with
// eventTime names its reporting controller and instance, action and reason.
// events.k8s.io/v1 writes add ValidateEventStrict.
func ValidateEvent(e *Event) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != "" && e.Namespace != "default" {
				errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if e.InvolvedObject.Namespace == "" && e.Namespace != "default" && e.Namespace != "kube-system" {
			errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		errs = append(errs, requiredAtMost(field.NewPath("reportingController"), e.ReportingController, 0)...)
		for _, msg := range validation.IsQualifiedName(e.ReportingController) {
			errs = append(errs, field.Invalid(field.NewPath("reportingController"), e.ReportingController, msg))
		}
		errs = append(errs, requiredAtMost(field.NewPath("reportingInstance"), e.ReportingInstance, EventReportingInstanceLengthLimit)...)
		errs = append(errs, requiredAtMost(field.NewPath("action"), e.Action, EventActionLengthLimit)...)
		errs = append(errs, requiredAtMost(field.NewPath("reason"), e.Reason, EventReasonLengthLimit)...)
		if len(e.Message) > EventNoteLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", EventNoteLengthLimit)))
		}
	}
	for _, msg := range validation.IsDNS1123Subdomain(e.Namespace) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), e.Namespace, msg))
	}
	return errs
}

// requiredAtMost reports an empty value as required and, when limit is not
// 0, a longer one as invalid.
func requiredAtMost(path *field.Path, value string, limit int) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if limit > 0 && len(value) > limit {
		return field.ErrorList{field.Invalid(path, "", fmt.Sprintf("can have at most %v characters", limit))}
	}
	return nil
}

// ValidateEventStrict is what Kubernetes checks beyond ValidateEvent when an
// event is created through events.k8s.io/v1 (paths in the core/v1 form, as
// Kubernetes reports them): eventTime set, type Normal or Warning, a valid
// series, and none of the deprecated core fields.
func ValidateEventStrict(e *Event) field.ErrorList {
	errs := ValidateEvent(e)
	errs = append(errs, validateEventSeries(e)...)
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != "Normal" && e.Type != "Warning" {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !e.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if e.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if e.Source.Component != "" || e.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// ValidateEventStrictUpdate is Kubernetes' check of an update through
// events.k8s.io/v1: ValidateEvent, a changed series valid, and everything
// but the series and metadata immutable.
func ValidateEventStrictUpdate(e, old *Event) field.ErrorList {
	errs := ValidateEvent(e)
	if !seriesEqual(e.Series, old.Series) {
		errs = append(errs, validateEventSeries(e)...)
	}
	for _, f := range []struct {
		path     string
		new, old any
	}{
		{"involvedObject", e.InvolvedObject, old.InvolvedObject},
		{"reason", e.Reason, old.Reason},
		{"message", e.Message, old.Message},
		{"source", e.Source, old.Source},
		{"firstTimestamp", e.FirstTimestamp.UTC(), old.FirstTimestamp.UTC()},
		{"lastTimestamp", e.LastTimestamp.UTC(), old.LastTimestamp.UTC()},
		{"count", e.Count, old.Count},
		{"type", e.Type, old.Type},
		{"eventTime", e.EventTime.UTC(), old.EventTime.UTC()},
		{"action", e.Action, old.Action},
		{"related", derefRef(e.Related), derefRef(old.Related)},
		{"reportingController", e.ReportingController, old.ReportingController},
		{"reportingInstance", e.ReportingInstance, old.ReportingInstance},
	} {
		errs = append(errs, validation.ValidateImmutableField(f.new, f.old, field.NewPath(f.path))...)
	}
	return errs
}

func derefRef(r *ObjectReference) ObjectReference {
	if r == nil {
		return ObjectReference{}
	}
	return *r
}

func seriesEqual(a, b *EventSeries) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Count == b.Count && a.LastObservedTime.Equal(b.LastObservedTime.Time)
}

func validateEventSeries(e *Event) field.ErrorList {
	if e.Series == nil {
		return nil
	}
	var errs field.ErrorList
	if e.Series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if e.Series.LastObservedTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}
