package controllerutil_test

import (
	"errors"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/scheme"
)

func TestFinalizers(t *testing.T) {
	t.Parallel()
	cm := &corev1.ConfigMap{}
	if !controllerutil.AddFinalizer(cm, "a") || controllerutil.AddFinalizer(cm, "a") {
		t.Fatal("AddFinalizer should report a change once")
	}
	if !controllerutil.ContainsFinalizer(cm, "a") {
		t.Fatal("finalizer missing")
	}
	if !controllerutil.RemoveFinalizer(cm, "a") || controllerutil.RemoveFinalizer(cm, "a") {
		t.Fatal("RemoveFinalizer should report a change once")
	}
	if cm.Finalizers != nil {
		t.Fatalf("finalizers = %v, want nil", cm.Finalizers)
	}
}

func newScheme(t *testing.T) *scheme.Scheme {
	s := scheme.New()
	if err := s.AddKnownTypes(corev1.GroupVersion(), &corev1.ConfigMap{}, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOwnerReferences(t *testing.T) {
	t.Parallel()
	s := newScheme(t)
	owner := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	second := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "second", UID: "u2"}}
	obj := &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "child"}}

	if err := controllerutil.SetControllerReference(owner, obj, s); err != nil {
		t.Fatal(err)
	}
	if err := controllerutil.SetControllerReference(owner, obj, s); err != nil {
		t.Fatalf("setting the same controller again: %v", err)
	}
	ref := controllerutil.GetControllerOf(obj)
	if ref == nil || ref.Name != "owner" || ref.UID != "u1" || ref.APIVersion != "v1" || ref.Kind != "ConfigMap" || !*ref.BlockOwnerDeletion {
		t.Fatalf("controller ref = %+v", ref)
	}
	err := controllerutil.SetControllerReference(second, obj, s)
	var owned *controllerutil.AlreadyOwnedError
	if !errors.Is(err, controllerutil.ErrAlreadyOwned) || !errors.As(err, &owned) || owned.Owner.Name != "owner" {
		t.Fatalf("second controller: %v", err)
	}
	if err := controllerutil.SetOwnerReference(second, obj, s); err != nil {
		t.Fatal(err)
	}
	if err := controllerutil.SetOwnerReference(owner, obj, s); err != nil {
		t.Fatal(err)
	}
	if n := len(obj.OwnerReferences); n != 2 {
		t.Fatalf("%d owner references, want 2", n)
	}
	if controllerutil.GetControllerOf(obj).Name != "owner" {
		t.Fatal("SetOwnerReference dropped the controller flag")
	}
	if ok, err := controllerutil.RemoveOwnerReference(second, obj, s); !ok || err != nil {
		t.Fatalf("RemoveOwnerReference = %v, %v", ok, err)
	}

	other := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "elsewhere", Name: "o", UID: "u3"}}
	if err := controllerutil.SetOwnerReference(other, obj, s); !errors.Is(err, controllerutil.ErrInvalidOwner) {
		t.Errorf("cross-namespace owner: %v", err)
	}
	cluster := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "c"}}
	if err := controllerutil.SetOwnerReference(owner, cluster, s); !errors.Is(err, controllerutil.ErrInvalidOwner) {
		t.Errorf("namespaced owner of cluster-scoped object: %v", err)
	}
	if err := controllerutil.SetOwnerReference(&corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "new"}}, obj, s); !errors.Is(err, controllerutil.ErrInvalidOwner) {
		t.Errorf("owner without uid: %v", err)
	}
}

func TestControllerRef(t *testing.T) {
	t.Parallel()
	owner := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	other := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u2"}}
	obj := &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "child"}}
	if controllerutil.IsControlledBy(obj, owner) {
		t.Fatal("an object without owners is controlled")
	}
	ref := controllerutil.NewControllerRef(owner, corev1.GroupVersion().WithKind("ConfigMap"))
	if ref.APIVersion != "v1" || ref.Kind != "ConfigMap" || ref.Name != "owner" || ref.UID != "u1" || !*ref.Controller || !*ref.BlockOwnerDeletion {
		t.Fatalf("NewControllerRef = %+v", ref)
	}
	obj.OwnerReferences = []api.OwnerReference{ref}
	if !controllerutil.IsControlledBy(obj, owner) || controllerutil.IsControlledBy(obj, other) {
		t.Fatal("IsControlledBy must match the controller's uid")
	}
	obj.OwnerReferences[0].Controller = api.Ptr(false)
	if controllerutil.IsControlledBy(obj, owner) {
		t.Fatal("a non-controlling owner controls")
	}
}

func TestOwnerReferencesPatch(t *testing.T) {
	t.Parallel()
	ref := api.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: api.Ptr(true)}
	for name, tc := range map[string]struct {
		refs []api.OwnerReference
		want string
	}{
		"replace": {[]api.OwnerReference{ref}, `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u","controller":true}],"resourceVersion":"7"}}`},
		"remove":  {nil, `{"metadata":{"ownerReferences":null,"resourceVersion":"7"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := controllerutil.OwnerReferencesPatch("7", tc.refs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Data(nil)
			if err != nil || string(got) != tc.want || p.Type() != client.MergePatchType {
				t.Errorf("patch = %s (%s), %v; want %s", got, p.Type(), err, tc.want)
			}
		})
	}
}

func TestSetStatusCondition(t *testing.T) {
	t.Parallel()
	t0 := api.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var conds []api.Condition
	if !controllerutil.SetStatusCondition(&conds, api.Condition{Type: "Ready", Status: api.ConditionFalse, Reason: "Init", ObservedGeneration: 1, LastTransitionTime: t0}) {
		t.Fatal("new condition not reported")
	}
	if !conds[0].LastTransitionTime.Equal(t0.Time) {
		t.Fatal("given lastTransitionTime not used")
	}
	if !controllerutil.SetStatusCondition(&conds, api.Condition{Type: "Ready", Status: api.ConditionFalse, Reason: "Waiting", ObservedGeneration: 2}) {
		t.Fatal("reason change not reported")
	}
	if !conds[0].LastTransitionTime.Equal(t0.Time) {
		t.Fatal("lastTransitionTime moved without a status change")
	}
	if controllerutil.SetStatusCondition(&conds, api.Condition{Type: "Ready", Status: api.ConditionFalse, Reason: "Waiting", ObservedGeneration: 2}) {
		t.Fatal("no-op reported as change")
	}
	if !controllerutil.SetStatusCondition(&conds, api.Condition{Type: "Ready", Status: api.ConditionTrue, Reason: "Done", ObservedGeneration: 2}) {
		t.Fatal("status change not reported")
	}
	if conds[0].LastTransitionTime.Equal(t0.Time) || conds[0].LastTransitionTime.IsZero() {
		t.Fatal("lastTransitionTime not updated on status change")
	}
	if !controllerutil.IsStatusConditionTrue(conds, "Ready") || !controllerutil.IsStatusConditionCurrent(conds, "Ready", 2) ||
		controllerutil.IsStatusConditionCurrent(conds, "Ready", 3) {
		t.Fatal("condition queries wrong")
	}
	if !controllerutil.RemoveStatusCondition(&conds, "Ready") || len(conds) != 0 {
		t.Fatal("RemoveStatusCondition failed")
	}
}
