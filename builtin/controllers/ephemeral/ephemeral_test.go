package ephemeral

import (
	"slices"
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

func TestClaimFor(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	v := corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: api.ObjectMeta{Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
			Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		}}}}
	pvc := ClaimFor(pod, v)
	if pvc.Name != "web-scratch" || pvc.Namespace != "ns" {
		t.Errorf("claim %s/%s, want ns/web-scratch", pvc.Namespace, pvc.Name)
	}
	if pvc.Labels["a"] != "b" || pvc.Annotations["c"] != "d" || len(pvc.Spec.AccessModes) != 1 {
		t.Errorf("template not copied: %+v", pvc)
	}
	if len(pvc.OwnerReferences) != 1 {
		t.Fatalf("owner references %v", pvc.OwnerReferences)
	}
	ref := pvc.OwnerReferences[0]
	if ref.Kind != "Pod" || ref.Name != "web" || ref.UID != "u1" || ref.Controller == nil || !*ref.Controller ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner reference %+v, want the pod as blocking controller", ref)
	}
}

func TestReconcileCreatesClaimsOnce(t *testing.T) {
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}, Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}}, {Name: "plain"}}}}
	fc := fakeclient.New(sch, pod)
	rec := &fakeclient.Recorder{}
	r := &reconciler{reader: fc, client: fc, recorder: rec}
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "web"}}
	for range 2 { // the second pass finds the claim (AlreadyExists) and does nothing
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := fc.Actions(), []string{"create PersistentVolumeClaim ns/web-scratch"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if ev := rec.Events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal/CreatedClaim:") {
		t.Errorf("events %v, want one CreatedClaim", ev)
	}
	if _, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "gone"}}); err != nil {
		t.Errorf("a missing pod: %v", err)
	}
}
