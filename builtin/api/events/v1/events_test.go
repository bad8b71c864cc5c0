package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	e := &Event{EventTime: api.NowMicro(), ReportingController: "c",
		ReportingInstance: "i", Action: "a", Reason: "r", Type: "Info", Series: &EventSeries{Count: 1}}
	want := "[type: Invalid value: \"\": has invalid value: Info, series.count: Invalid value: \"\": should be at least 2, series.lastObservedTime: Required value]"
	if got := ValidateEvent(e).ToError(); got == nil || got.Error() != want {
		t.Errorf("got %v\nwant %s", got, want)
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
