package ephemeral

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
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
