package v1

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the events.k8s.io/v1 resources: events, another name
// for the core/v1 events (one storage, converted on every read and write), as
// in Kubernetes.
func Resources() []*registry.Resource {
	core := corev1.GroupVersion().WithResource("events")
	return []*registry.Resource{{
		GroupVersion:     GroupVersion,
		Resource:         "events",
		Kind:             "Event",
		ListKind:         "EventList",
		Singular:         "event",
		ShortNames:       []string{"ev"},
		Namespaced:       true,
		Strategy:         registry.Typed[Event]{Validate: ValidateEvent, ValidateUpdateFunc: ValidateEventUpdate},
		NameValidation:   validation.NameIsDNSSubdomain,
		Type:             reflect.TypeFor[Event](),
		SelectableFields: selectableFields,
		Printer:          eventPrinter(),
		StorageResource:  &core,
		Convert:          Convert,
		StorageFieldLabels: map[string]string{
			"reportingController": "reportingComponent",
			"regarding.kind":      "involvedObject.kind", "regarding.namespace": "involvedObject.namespace",
			"regarding.name": "involvedObject.name", "regarding.uid": "involvedObject.uid",
			"regarding.apiVersion": "involvedObject.apiVersion", "regarding.resourceVersion": "involvedObject.resourceVersion",
			"regarding.fieldPath": "involvedObject.fieldPath",
		},
	}}
}

// selectableFields are the field-selector fields of events.k8s.io events, the
// core/v1 event fields under their events.k8s.io/v1 names.
func selectableFields(obj map[string]any) map[string]string {
	out := map[string]string{
		"reason":              api.NestedString(obj, "reason"),
		"reportingController": api.NestedString(obj, "reportingController"),
		"type":                api.NestedString(obj, "type"),
	}
	for _, f := range []string{"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"} {
		out["regarding."+f] = api.NestedString(obj, "regarding", f)
	}
	return out
}

func eventPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Last Seen", Type: "string", Description: "The time at which the most recent occurrence of this event was recorded."},
			{Name: "Type", Type: "string", Description: "Type of this event (Normal, Warning), new types could be added in the future"},
			{Name: "Reason", Type: "string", Description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."},
			{Name: "Object", Type: "string", Description: "The object that this event is about."},
			{Name: "Subobject", Type: "string", Priority: 1, Description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement."},
			{Name: "Source", Type: "string", Priority: 1, Description: "The component reporting this event. Should be a short machine understandable string."},
			{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation."},
			{Name: "First Seen", Type: "string", Priority: 1, Description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"},
			{Name: "Count", Type: "string", Priority: 1, Description: "The number of times this event has occurred."},
			{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "Name must be unique within a namespace."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			e, err := registry.FromMap[Event](obj)
			if err != nil {
				return nil, fmt.Errorf("decode event: %w", err)
			}
			return eventRow(e, now), nil
		},
	}
}

func microAge(t api.MicroTime, now time.Time) string {
	return registry.Age(api.NewTime(t.Time), now)
}

// eventRow renders the cells like kubectl's printEvent over the core form.
func eventRow(e *Event, now time.Time) []any {
	first := registry.Age(e.DeprecatedFirstTimestamp, now)
	if e.DeprecatedFirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := registry.Age(e.DeprecatedLastTimestamp, now)
	if e.DeprecatedLastTimestamp.IsZero() {
		last = first
	}
	count := e.DeprecatedCount
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.Regarding.Kind)
	if e.Regarding.Name != "" {
		target += "/" + e.Regarding.Name
	}
	component := firstNonEmpty(e.DeprecatedSource.Component, e.ReportingController)
	instance := firstNonEmpty(e.DeprecatedSource.Host, e.ReportingInstance)
	source := "<unknown>"
	if component != "" {
		source = component
		if instance != "" {
			source += ", " + instance
		}
	}
	return []any{last, e.Type, e.Reason, target, e.Regarding.FieldPath, source,
		strings.TrimSpace(e.Note), first, int64(count), e.Name}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
