package namespace

import (
	"errors"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

func TestConditions(t *testing.T) {
	t.Parallel()
	totals := contentTotals{
		objects:    map[string]int{"configmaps.": 2, "foos.samplecontroller.k8s.io": 1},
		finalizers: map[string]int{"example.com/hold": 1},
	}
	got := conditions(nil, []error{errors.New("delete secrets.: boom")}, totals)
	want := []corev1.NamespaceCondition{
		{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: "False", Reason: "ResourcesDiscovered", Message: "All resources successfully discovered"},
		{Type: corev1.NamespaceDeletionContentFailure, Status: "True", Reason: "ContentDeletionFailed", Message: "Failed to delete all resource types, 1 remaining: delete secrets.: boom"},
		{Type: corev1.NamespaceContentRemaining, Status: "True", Reason: "SomeResourcesRemain",
			Message: "Some resources are remaining: configmaps. has 2 resource instances, foos.samplecontroller.k8s.io has 1 resource instances"},
		{Type: corev1.NamespaceFinalizersRemaining, Status: "True", Reason: "SomeFinalizersRemain",
			Message: "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d conditions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("condition %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}
