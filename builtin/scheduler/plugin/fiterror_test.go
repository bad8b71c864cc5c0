package plugin

import "testing"

func TestFitErrorMessage(t *testing.T) {
	t.Parallel()
	m := NewDefaultNodeToStatus()
	m.Set("a", NewStatus(Unschedulable, "Insufficient cpu"))
	m.Set("b", NewStatus(Unschedulable, "Insufficient cpu"))
	for _, n := range []string{"c", "d", "e"} {
		m.Set(n, NewStatus(UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}"))
	}
	tests := []struct {
		name string
		d    Diagnosis
		want string
	}{
		{name: "filter", d: Diagnosis{NodeToStatus: m}, want: "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {dedicated: gpu}."},
		{name: "with preemption", d: Diagnosis{NodeToStatus: m, PostFilterMsg: "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."},
			want: "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."},
		{name: "prefilter", d: Diagnosis{NodeToStatus: m, PreFilterMsg: "pod affinity terms conflict"}, want: "0/5 nodes are available: pod affinity terms conflict."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (&FitError{NumAllNodes: 5, Diagnosis: tt.d}).Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
