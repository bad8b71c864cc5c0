package deployment

import (
	"testing"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestResolveFenceposts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		surge, unavail api.IntOrString
		desired        int32
		wantS, wantU   int32
	}{
		{api.FromString("25%"), api.FromString("25%"), 10, 3, 2},
		{api.FromString("25%"), api.FromString("25%"), 1, 1, 0},
		{api.FromInt(1), api.FromInt(0), 3, 1, 0},
		{api.FromInt(0), api.FromInt(0), 3, 0, 1},
		{api.FromString("0%"), api.FromString("10%"), 5, 0, 1},
		{api.FromString("50%"), api.FromString("50%"), 3, 2, 1},
	} {
		s, u := ResolveFenceposts(&tc.surge, &tc.unavail, tc.desired)
		if s != tc.wantS || u != tc.wantU {
			t.Errorf("ResolveFenceposts(%v, %v, %d) = %d, %d; want %d, %d", tc.surge, tc.unavail, tc.desired, s, u, tc.wantS, tc.wantU)
		}
	}
}

func TestComputeHash(t *testing.T) {
	t.Parallel()
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	h := ComputeHash(tmpl, nil)
	if h != ComputeHash(tmpl, nil) {
		t.Fatal("hash must be stable")
	}
	if h == ComputeHash(tmpl, api.Ptr[int32](1)) {
		t.Fatal("collision count must change the hash")
	}
	for _, r := range h {
		if !containsRune(alphanums, r) {
			t.Fatalf("hash %q has %q outside the safe alphabet", h, r)
		}
	}
	other := *tmpl
	other.Labels = map[string]string{"app": "x", "pod-template-hash": h}
	if !EqualIgnoreHash(tmpl, &other) {
		t.Fatal("templates differing only in the hash label are equal")
	}
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

func TestNewRSNewReplicas(t *testing.T) {
	t.Parallel()
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: api.Ptr[int32](3), Strategy: appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: api.Ptr(api.FromInt(1)), MaxUnavailable: api.Ptr(api.FromInt(0))}}}}
	rs := func(n int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr(n)}}
	}
	oldRS, newRS := rs(3), rs(0)
	if got := NewRSNewReplicas(d, []*appsv1.ReplicaSet{oldRS, newRS}, newRS); got != 1 {
		t.Errorf("surge 1 over 3: new RS may grow to 1, got %d", got)
	}
	newRS = rs(1)
	if got := NewRSNewReplicas(d, []*appsv1.ReplicaSet{oldRS, newRS}, newRS); got != 1 {
		t.Errorf("at 4 pods: no growth, got %d", got)
	}
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if got := NewRSNewReplicas(d, []*appsv1.ReplicaSet{oldRS, newRS}, newRS); got != 3 {
		t.Errorf("recreate: %d", got)
	}
}

func TestProportionalScale(t *testing.T) {
	t.Parallel()
	// 10 replicas, surge 3 (25% up): sized for 13. Scaled to 20 (surge 5): 25.
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: api.Ptr[int32](20), Strategy: appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: api.Ptr(api.FromString("25%")), MaxUnavailable: api.Ptr(api.FromString("25%"))}}}}
	mk := func(n int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Annotations: map[string]string{MaxReplicasAnnotation: "13"}},
			Spec: appsv1.ReplicaSetSpec{Replicas: api.Ptr(n)}}
	}
	a, b := mk(8), mk(5)
	toAdd := int32(25 - 13)
	pa := proportion(d, a, toAdd, 0)
	pb := proportion(d, b, toAdd, pa)
	if pa+pb > toAdd || pa < pb {
		t.Fatalf("proportions %d, %d of %d", pa, pb, toAdd)
	}
}
