package volumebinder

import (
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

func TestVolumePhase(t *testing.T) {
	t.Parallel()
	now := time.Unix(2000, 0)
	ref := func(uid string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: "data", UID: uid}
	}
	for _, tc := range []struct {
		name  string
		phase corev1.PersistentVolumePhase // the volume's phase before
		ref   *corev1.ObjectReference
		pvc   *corev1.PersistentVolumeClaim // nil: absent
		want  corev1.PersistentVolumePhase
	}{
		{name: "new volume", phase: corev1.VolumePending, want: corev1.VolumeAvailable},
		{name: "already available", phase: corev1.VolumeAvailable, want: corev1.VolumeAvailable},
		{name: "pre-bound to a missing claim", phase: corev1.VolumePending, ref: ref(""), want: corev1.VolumeAvailable},
		{name: "pre-bound to an unbound claim", phase: corev1.VolumePending, ref: ref(""), pvc: claim(), want: corev1.VolumeAvailable},
		{name: "claim names the volume", phase: corev1.VolumeAvailable, ref: ref("u1"),
			pvc: claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv1" }), want: corev1.VolumeBound},
		{name: "claim gone", phase: corev1.VolumeBound, ref: ref("u1"), want: corev1.VolumeReleased},
		{name: "claim being bound to it", phase: corev1.VolumeAvailable, ref: ref("u1"), pvc: claim(), want: corev1.VolumeBound},
		{name: "claim bound to another volume", phase: corev1.VolumeBound, ref: ref("u1"),
			pvc: claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv9" }), want: corev1.VolumeAvailable},
		{name: "claim replaced", phase: corev1.VolumeBound, ref: ref("old"), pvc: claim(), want: corev1.VolumeReleased},
		{name: "failed stays failed", phase: corev1.VolumeFailed, want: corev1.VolumeFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sch, err := all.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			pv := &corev1.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv1"},
				Spec: corev1.PersistentVolumeSpec{ClaimRef: tc.ref}, Status: corev1.PersistentVolumeStatus{Phase: tc.phase}}
			objs := []api.Object{pv}
			if tc.pvc != nil {
				objs = append(objs, tc.pvc)
			}
			fc := fakeclient.New(sch, objs...)
			r := &phaseReconciler{reader: fc, client: fc, recorder: &fakeclient.Recorder{}, now: func() time.Time { return now }}
			if _, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Name: "pv1"}}); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &corev1.PersistentVolume{}
			if err := fc.Get(t.Context(), client.ObjectKey{Name: "pv1"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != tc.want {
				t.Fatalf("phase %q, want %q", got.Status.Phase, tc.want)
			}
			changed := tc.want != tc.phase
			if stamped := got.Status.LastPhaseTransitionTime != nil && got.Status.LastPhaseTransitionTime.Equal(now); stamped != changed {
				t.Errorf("lastPhaseTransitionTime %v; phase changed: %v", got.Status.LastPhaseTransitionTime, changed)
			}
		})
	}
	// A missing volume is no error.
	sch, _ := all.NewScheme()
	fc := fakeclient.New(sch)
	r := &phaseReconciler{reader: fc, client: fc, now: time.Now}
	if _, err := r.Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Name: "gone"}}); err != nil {
		t.Errorf("missing volume: %v", err)
	}
}
