package v1

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// scheduled is an events.k8s.io Event as the scheduler records it.
const scheduled = `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"web-0.17a1b2c3d4e5f607","namespace":"default"},
	"eventTime":"2024-01-01T00:00:00.250000Z","reportingController":"default-scheduler","reportingInstance":"default-scheduler-cp1",
	"action":"Binding","reason":"Scheduled","regarding":{"kind":"Pod","namespace":"default","name":"web-0","uid":"11aa","apiVersion":"v1","resourceVersion":"812"},
	"note":"Successfully assigned default/web-0 to n1","type":"Normal",
	"series":{"count":3,"lastObservedTime":"2024-01-01T00:04:00.000000Z"}}`

func eventResource(t *testing.T) *registry.Resource {
	t.Helper()
	rs := Resources()
	if len(rs) != 1 || rs[0].Resource != "events" {
		t.Fatalf("resources %v", rs)
	}
	return rs[0]
}

func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	in, err := api.DecodeMap([]byte(scheduled))
	if err != nil {
		t.Fatal(err)
	}
	r := eventResource(t)
	out, unknown, errs := r.Strategy.Canonicalize(api.DeepCopyJSON(in))
	if len(unknown) > 0 || len(errs) > 0 {
		t.Fatalf("unknown %v, errs %v", unknown, errs)
	}
	// No defaults; like Kubernetes, the unset deprecated fields serialize as
	// null timestamps and an empty source.
	want := api.DeepCopyJSON(in)
	want["deprecatedSource"] = map[string]any{}
	want["deprecatedFirstTimestamp"] = nil
	want["deprecatedLastTimestamp"] = nil
	want["metadata"].(map[string]any)["creationTimestamp"] = nil
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("canonical form (-want +got):\n%s", diff)
	}
	if errs := r.Strategy.ValidateCreate(t.Context(), out); len(errs) > 0 {
		t.Errorf("ValidateCreate: %v", errs.ToError())
	}
	if f := r.SelectableFields(out); f["regarding.name"] != "web-0" || f["reportingController"] != "default-scheduler" {
		t.Errorf("selectable fields %v", f)
	}
}

func TestValidateEvent(t *testing.T) {
	t.Parallel()
	valid := func() *Event {
		return &Event{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "e"}, EventTime: api.NowMicro(),
			ReportingController: "example.com/c", ReportingInstance: "i", Action: "a", Reason: "r", Type: "Normal",
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"}}
	}
	for _, tc := range []struct {
		name   string
		change func(e *Event)
		want   string // the errors, "" for none
	}{
		{"valid", func(*Event) {}, ""},
		{"no eventTime", func(e *Event) { e.EventTime = api.MicroTime{} },
			`eventTime: Required value`},
		{"no reporter", func(e *Event) { e.ReportingController, e.ReportingInstance = "", "" },
			`reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty, ` +
				`reportingController: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), ` +
				`reportingInstance: Required value`},
		{"bad type and series", func(e *Event) {
			e.Type = "Info"
			e.Series = &EventSeries{Count: 1}
		}, `series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value, type: Invalid value: "": has invalid value: Info`},
		{"deprecated fields", func(e *Event) {
			e.DeprecatedCount = 2
			e.DeprecatedSource.Component = "kubelet"
			e.DeprecatedFirstTimestamp = api.Now()
		}, `firstTimestamp: Invalid value: "": needs to be unset, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset`},
		{"cluster-scoped object outside default", func(e *Event) { e.Regarding.Namespace = "" },
			`involvedObject.namespace: Invalid value: "": does not match event.namespace`},
		{"long note", func(e *Event) { e.Note = strings.Repeat("x", corev1.EventNoteLengthLimit+1) },
			`message: Invalid value: "": can have at most 1024 characters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := valid()
			tc.change(e)
			got := ""
			if err := ValidateEvent(e).ToError(); err != nil {
				got = strings.Trim(err.Error(), "[]")
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestValidateEventUpdate(t *testing.T) {
	t.Parallel()
	old := &Event{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "e"}, EventTime: api.NowMicro(),
		ReportingController: "c", ReportingInstance: "i", Action: "a", Reason: "r", Type: "Normal", Note: "n",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"}}
	series := *old
	series.Series = &EventSeries{Count: 2, LastObservedTime: api.NowMicro()}
	if errs := ValidateEventUpdate(&series, old); len(errs) > 0 {
		t.Errorf("series update: %v", errs.ToError())
	}
	changed := series
	changed.Note, changed.Reason = "other", "other"
	want := `[reason: Invalid value: "other": field is immutable, message: Invalid value: "other": field is immutable]`
	if err := ValidateEventUpdate(&changed, old).ToError(); err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestEventPrinter(t *testing.T) {
	t.Parallel()
	p := eventResource(t).Printer
	in, err := api.DecodeMap([]byte(scheduled))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 1, 1, 0, 10, 0, 0, time.UTC)
	row, err := p.Row(in, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"6m", "Normal", "Scheduled", "pod/web-0", "", "default-scheduler, default-scheduler-cp1",
		"Successfully assigned default/web-0 to n1", "9m59s", int64(3), "web-0.17a1b2c3d4e5f607"}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	if len(row) != len(p.Columns) {
		t.Errorf("%d cells for %d columns", len(row), len(p.Columns))
	}
}

// TestConvert checks the field mapping both ways and that an event survives
// the round trip through its core/v1 (storage) form unchanged.
func TestConvert(t *testing.T) {
	t.Parallel()
	in, err := api.DecodeMap([]byte(scheduled))
	if err != nil {
		t.Fatal(err)
	}
	r := eventResource(t)
	canonical, _, errs := r.Strategy.Canonicalize(in)
	if len(errs) > 0 {
		t.Fatal(errs.ToError())
	}
	canonical["deprecatedCount"] = int64(4)
	canonical["deprecatedSource"] = map[string]any{"component": "kubelet", "host": "n1"}
	canonical["related"] = map[string]any{"kind": "Node", "name": "n1"}
	core, err := Convert(api.DeepCopyJSON(canonical), corev1.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"apiVersion": "v1", "kind": "Event", "message": "Successfully assigned default/web-0 to n1",
		"reportingComponent": "default-scheduler", "reportingInstance": "default-scheduler-cp1",
		"count": int64(4), "action": "Binding", "reason": "Scheduled", "type": "Normal",
		"eventTime": "2024-01-01T00:00:00.250000Z",
	} {
		if got := core[path]; got != want {
			t.Errorf("core %s = %#v, want %#v", path, got, want)
		}
	}
	if got := api.NestedString(core, "involvedObject", "name"); got != "web-0" {
		t.Errorf("involvedObject.name = %q", got)
	}
	if got := api.NestedString(core, "source", "component"); got != "kubelet" {
		t.Errorf("source.component = %q", got)
	}
	for _, gone := range []string{"note", "regarding", "reportingController", "deprecatedSource", "deprecatedCount"} {
		if _, ok := core[gone]; ok {
			t.Errorf("core form has %s", gone)
		}
	}
	back, err := Convert(core, GroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(canonical, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := Convert(map[string]any{"apiVersion": "apps/v1"}, GroupVersion); err == nil {
		t.Error("converting another group's object succeeded")
	}
}
