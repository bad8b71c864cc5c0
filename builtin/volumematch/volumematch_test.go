package volumematch

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func claim(mut ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "data", UID: "u1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{string(corev1.ResourceStorage): api.MustParseQuantity("1Gi")}},
		},
	}
	for _, m := range mut {
		m(pvc)
	}
	return pvc
}

func volume(name, class, size string, mut ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:         corev1.ResourceList{string(corev1.ResourceStorage): api.MustParseQuantity(size)},
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: class,
	}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}}
	for _, m := range mut {
		m(pv)
	}
	return pv
}

func TestBest(t *testing.T) {
	t.Parallel()
	ref := func(uid string) func(*corev1.PersistentVolume) {
		return func(pv *corev1.PersistentVolume) {
			pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "data", UID: uid}
		}
	}
	other := func(pv *corev1.PersistentVolume) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "other", UID: "u2"}
	}
	failed := func(pv *corev1.PersistentVolume) { pv.Status.Phase = corev1.VolumeFailed }
	gold := func(pv *corev1.PersistentVolume) { pv.Labels = map[string]string{"tier": "gold"} }
	rox := func(pv *corev1.PersistentVolume) {
		pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
	}
	blockPV := func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = api.Ptr(corev1.PersistentVolumeBlock) }
	on := func(node string) func(*corev1.PersistentVolume) {
		return func(pv *corev1.PersistentVolume) {
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
		}
	}
	n1 := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}}}
	selector := func(c *corev1.PersistentVolumeClaim) {
		c.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
	}
	for _, tc := range []struct {
		name  string
		pvc   *corev1.PersistentVolumeClaim // requests 1Gi RWO
		class string
		node  *corev1.Node
		pvs   []*corev1.PersistentVolume
		want  string
	}{
		{name: "none", pvc: claim(), want: ""},
		{name: "smallest that fits", pvc: claim(), pvs: []*corev1.PersistentVolume{
			volume("small", "", "500Mi"), volume("big", "", "10Gi"), volume("fit", "", "2Gi"), volume("fit-b", "", "2Gi")}, want: "fit"},
		{name: "class must match", pvc: claim(), class: "gold", pvs: []*corev1.PersistentVolume{
			volume("none", "", "1Gi"), volume("gold", "gold", "5Gi")}, want: "gold"},
		{name: "access modes a superset", pvc: claim(), pvs: []*corev1.PersistentVolume{volume("rox", "", "1Gi", rox)}, want: ""},
		{name: "volume mode equal", pvc: claim(), pvs: []*corev1.PersistentVolume{volume("block", "", "1Gi", blockPV)}, want: ""},
		{name: "selector", pvc: claim(selector), pvs: []*corev1.PersistentVolume{
			volume("plain", "", "1Gi"), volume("gold", "", "5Gi", gold)}, want: "gold"},
		{name: "claimed, failed and deleted volumes are skipped", pvc: claim(), pvs: []*corev1.PersistentVolume{
			volume("taken", "", "1Gi", other), volume("failed", "", "1Gi", failed),
			volume("deleted", "", "1Gi", func(pv *corev1.PersistentVolume) { pv.DeletionTimestamp = &api.Time{} })}, want: ""},
		{name: "pre-bound volume first", pvc: claim(), pvs: []*corev1.PersistentVolume{
			volume("fit", "", "1Gi"), volume("mine", "", "9Gi", ref(""))}, want: "mine"},
		{name: "volume bound to this claim's uid", pvc: claim(), pvs: []*corev1.PersistentVolume{
			volume("fit", "", "1Gi"), volume("mine", "", "9Gi", ref("u1"))}, want: "mine"},
		{name: "volume of an older claim of that name", pvc: claim(), pvs: []*corev1.PersistentVolume{volume("old", "", "1Gi", ref("u0"))}, want: ""},
		{name: "node affinity ignored without a node", pvc: claim(), pvs: []*corev1.PersistentVolume{volume("n2", "", "1Gi", on("n2"))}, want: "n2"},
		{name: "node affinity must admit the node", pvc: claim(), node: n1, pvs: []*corev1.PersistentVolume{
			volume("n2", "", "1Gi", on("n2")), volume("n1", "", "3Gi", on("n1"))}, want: "n1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if pv := Best(tc.pvc, tc.pvs, tc.class, tc.node); pv != nil {
				got = pv.Name
			}
			if got != tc.want {
				t.Errorf("bestMatch = %q, want %q", got, tc.want)
			}
		})
	}
}
