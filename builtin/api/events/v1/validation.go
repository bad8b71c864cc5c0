package v1

import (
	"fmt"

	"github.com/converge-dev/converge/framework/api/field"
)

// Length limits of event fields, as in Kubernetes.
const (
	ReportingInstanceLengthLimit = 128
	ActionLengthLimit            = 128
	ReasonLengthLimit            = 128
	NoteLengthLimit              = 1024
)

// ValidateEvent checks a new-style event (metadata excluded): eventTime,
// reportingController, reportingInstance, action and reason are required, type is
// Normal or Warning.
func ValidateEvent(e *Event) field.ErrorList {
	var errs field.ErrorList
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != EventTypeNormal && e.Type != EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if e.ReportingController == "" {
		errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
	}
	if e.ReportingInstance == "" {
		errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
	} else if len(e.ReportingInstance) > ReportingInstanceLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", ReportingInstanceLengthLimit)))
	}
	if e.Action == "" {
		errs = append(errs, field.Required(field.NewPath("action"), ""))
	} else if len(e.Action) > ActionLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", ActionLengthLimit)))
	}
	if e.Reason == "" {
		errs = append(errs, field.Required(field.NewPath("reason"), ""))
	} else if len(e.Reason) > ReasonLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", ReasonLengthLimit)))
	}
	if len(e.Note) > NoteLengthLimit {
		errs = append(errs, field.Invalid(field.NewPath("note"), "", fmt.Sprintf("can have at most %v characters", NoteLengthLimit)))
	}
	if e.Series != nil {
		if e.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
		}
		if e.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
		}
	}
	return errs
}
