package v1

import "testing"

func TestEventSourceFieldFallsBackToReportingComponent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		obj  map[string]any
		want string
	}{
		{map[string]any{"source": map[string]any{"component": "kubelet"}, "reportingComponent": "x"}, "kubelet"},
		{map[string]any{"reportingComponent": "test-controller"}, "test-controller"},
		{map[string]any{}, ""},
	} {
		if got := eventFields(tc.obj)["source"]; got != tc.want {
			t.Errorf("source of %v = %q, want %q", tc.obj, got, tc.want)
		}
	}
}
