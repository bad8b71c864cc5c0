package statefulset

import (
	"testing"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestOrdinalOf(t *testing.T) {
	t.Parallel()
	s := &appsv1.StatefulSet{ObjectMeta: api.ObjectMeta{Name: "web"}}
	for name, want := range map[string]int{"web-0": 0, "web-12": 12, "web-01": -1, "web-x": -1, "webx-1": -1, "web-1-2": -1} {
		got, ok := ordinalOf(s, &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name}})
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("ordinalOf(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestRevisionFor(t *testing.T) {
	t.Parallel()
	s := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
		Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: api.Ptr[int32](2)}}}}
	for ord, want := range map[int]string{0: "cur", 1: "cur", 2: "upd", 3: "upd"} {
		if got := revisionFor(s, ord, 0, "cur", "upd"); got != want {
			t.Errorf("revisionFor(%d) = %q, want %q", ord, got, want)
		}
	}
	s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if got := revisionFor(s, 0, 0, "cur", "upd"); got != "upd" {
		t.Errorf("OnDelete revisionFor = %q, want upd", got)
	}
}

func TestNewPodClaims(t *testing.T) {
	t.Parallel()
	s := &appsv1.StatefulSet{ObjectMeta: api.ObjectMeta{Name: "db", Namespace: "ns", UID: "u"},
		Spec: appsv1.StatefulSetSpec{ServiceName: "svc", VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: api.ObjectMeta{Name: "data"}}}}}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "data"}}}}
	p, err := newPod(s, 4, "db-abc", tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "db-4" || p.Spec.Hostname != "db-4" || p.Spec.Subdomain != "svc" {
		t.Errorf("pod identity = %s %s %s", p.Name, p.Spec.Hostname, p.Spec.Subdomain)
	}
	if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].PersistentVolumeClaim == nil || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-db-4" {
		t.Errorf("volumes = %+v", p.Spec.Volumes)
	}
	if p.Labels[appsv1.PodIndexLabel] != "4" || p.Labels[appsv1.StatefulSetRevisionLabel] != "db-abc" {
		t.Errorf("labels = %v", p.Labels)
	}
}
