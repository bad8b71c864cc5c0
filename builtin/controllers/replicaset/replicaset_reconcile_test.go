package replicaset

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
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
	var creates atomic.Int32
	forbidden := apierrors.NewForbidden(api.GroupResource{Resource: "pods"}, "", errors.New("exceeded quota"))
	fc := newFake(t, rs)
	fc.Fail = func(verb string, _ client.ObjectKey, obj any) error {
		if _, ok := obj.(*corev1.Pod); ok && verb == "create" {
			creates.Add(1)
			return forbidden
		}
		return nil
	}
	rec := &fakeclient.Recorder{}
	r := newTestReconciler(fc, fc, rec)
	_, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "r"}})
	if err == nil {
		t.Fatal("want an error")
	}
	if creates.Load() != 1 {
		t.Errorf("creates = %d, want 1 (slow start stops after the first failure)", creates.Load())
	}
	if ev := rec.Events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning/"+ReasonFailedCreate+":") {
		t.Errorf("events = %v", ev)
	}
	if !r.expectations.Satisfied("ns/r") {
		t.Error("failed creations must not be expected")
	}
	written := &appsv1.ReplicaSet{}
	if err := fc.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "r"}, written); err != nil {
		t.Fatal(err)
	}
	if len(written.Status.Conditions) != 1 || written.Status.Conditions[0].Reason != "FailedCreate" ||
		written.Status.ObservedGeneration != 2 {
		t.Fatalf("status = %+v", written.Status)
	}
}

func TestExpectationsBlockManage(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "ns", UID: "u1"},
		Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr[int32](2),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
	}
	// A cache that never catches up: the pods are created on the server only.
	cached, server := newFake(t, rs), newFake(t, rs)
	r := newTestReconciler(cached, server, &fakeclient.Recorder{})
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "r"}}
	for range 3 {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	creates := 0
	for _, a := range server.Actions() {
		if strings.HasPrefix(a, "create Pod ") {
			creates++
		}
	}
	if creates != 2 {
		t.Fatalf("creates = %d, want 2: a slow cache must not cause double creations", creates)
	}
}

func newFake(t *testing.T, objs ...api.Object) *fakeclient.Client {
	t.Helper()
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return fakeclient.New(sch, objs...)
}

// newTestReconciler reads from cached and writes to server.
func newTestReconciler(cached, server *fakeclient.Client, rec *fakeclient.Recorder) *reconciler {
	return &reconciler{
		replicaSets:  fakeclient.ListerOf[*appsv1.ReplicaSet](cached),
		pods:         fakeclient.ListerOf[*corev1.Pod](cached),
		client:       server,
		live:         server,
		recorder:     rec,
		expectations: podutil.NewExpectations(nil),
		now:          time.Now,
	}
}
