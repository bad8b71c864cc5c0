package v1

import (
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Convert converts an Event between events.k8s.io/v1 and core/v1, the version
// both APIs store it in (registry.Resource.Convert). The fields map one to one:
// note is message, regarding is involvedObject, reportingController is
// reportingComponent, and the deprecated* fields are the core ones of the same
// name (source, firstTimestamp, lastTimestamp, count).
func Convert(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
	from := api.NestedString(obj, "apiVersion")
	if from == to.String() {
		return obj, nil
	}
	switch {
	case from == corev1.GroupVersion().String() && to == GroupVersion:
		e, err := registry.FromMap[corev1.Event](obj)
		if err != nil {
			return nil, fmt.Errorf("convert core/v1 Event to %s: %w", to, err)
		}
		return registry.ToMap(FromCore(e))
	case from == GroupVersion.String() && to == corev1.GroupVersion():
		e, err := registry.FromMap[Event](obj)
		if err != nil {
			return nil, fmt.Errorf("convert %s Event to core/v1: %w", from, err)
		}
		return registry.ToMap(ToCore(e))
	}
	return nil, fmt.Errorf("no conversion of Event from %q to %s", from, to)
}

// ToCore returns e in the core/v1 form.
func ToCore(e *Event) *corev1.Event {
	out := &corev1.Event{
		TypeMeta:            api.TypeMeta{APIVersion: corev1.GroupVersion().String(), Kind: "Event"},
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Action:              e.Action,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// FromCore returns e in the events.k8s.io/v1 form.
func FromCore(e *corev1.Event) *Event {
	out := &Event{
		TypeMeta:                 api.TypeMeta{APIVersion: GroupVersion.String(), Kind: "Event"},
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}
