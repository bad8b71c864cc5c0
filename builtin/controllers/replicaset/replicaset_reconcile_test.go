package replicaset

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

func TestSlowStartBatch(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	ok, err := slowStartBatch(10, 1, func() error { calls.Add(1); return nil })
	if ok != 10 || err != nil || calls.Load() != 10 {
		t.Fatalf("all succeed: ok=%d err=%v calls=%d", ok, err, calls.Load())
	}
	calls.Store(0)
	ok, err = slowStartBatch(10, 1, func() error {
		if calls.Add(1) > 3 {
			return errors.New("quota")
		}
		return nil
	})
	// Batches 1, 2 succeed (3 calls), the batch of 4 fails: 7 calls, no more.
	if ok != 3 || err == nil || calls.Load() != 7 {
		t.Fatalf("failing: ok=%d err=%v calls=%d", ok, err, calls.Load())
	}
}

// TestFailedCreate checks the ReplicaFailure condition, the FailedCreate
// event and that skipped creations are taken out of the expectations.
func TestFailedCreate(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "ns", UID: "u1", Generation: 2},
		Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr[int32](5),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"a": "b"}}}},
	}
	var (
		creates atomic.Int32
		events  []string
		written *appsv1.ReplicaSet
	)
	forbidden := apierrors.NewForbidden(api.GroupResource{Resource: "pods"}, "", errors.New("exceeded quota"))
	r := &Reconciler{
		GetReplicaSet: func(client.ObjectKey) *appsv1.ReplicaSet { return rs },
		ListPods:      func(string) []*corev1.Pod { return nil },
		CreatePod:     func(context.Context, *corev1.Pod) error { creates.Add(1); return forbidden },
		UpdateStatus:  func(_ context.Context, rs *appsv1.ReplicaSet) error { written = rs; return nil },
		Event: func(_ context.Context, _ api.Object, _, reason, _ string) {
			events = append(events, reason)
		},
		Expectations: podutil.NewExpectations(nil),
		Now:          time.Now,
	}
	_, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "r"}})
	if err == nil {
		t.Fatal("want an error")
	}
	if creates.Load() != 1 {
		t.Errorf("creates = %d, want 1 (slow start stops after the first failure)", creates.Load())
	}
	if len(events) != 1 || events[0] != ReasonFailedCreate {
		t.Errorf("events = %v", events)
	}
	if !r.Expectations.Satisfied("ns/r") {
		t.Error("failed creations must not be expected")
	}
	if written == nil || len(written.Status.Conditions) != 1 || written.Status.Conditions[0].Reason != "FailedCreate" ||
		written.Status.ObservedGeneration != 2 {
		t.Fatalf("status = %+v", written)
	}
}

func TestExpectationsBlockManage(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "ns", UID: "u1"},
		Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr[int32](2),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
	}
	var creates atomic.Int32
	r := &Reconciler{
		GetReplicaSet: func(client.ObjectKey) *appsv1.ReplicaSet { return rs },
		ListPods:      func(string) []*corev1.Pod { return nil }, // a cache that never catches up
		CreatePod:     func(context.Context, *corev1.Pod) error { creates.Add(1); return nil },
		UpdateStatus:  func(context.Context, *appsv1.ReplicaSet) error { return nil },
		Event:         func(context.Context, api.Object, string, string, string) {},
		Expectations:  podutil.NewExpectations(nil),
		Now:           time.Now,
	}
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "r"}}
	for range 3 {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if creates.Load() != 2 {
		t.Fatalf("creates = %d, want 2: a slow cache must not cause double creations", creates.Load())
	}
}
