package limitrange

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = api.MustParseQuantity(kv[i+1])
	}
	return out
}

func TestConstraints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		item             corev1.LimitRangeItem
		requests, limits corev1.ResourceList
		want             string
	}{
		{"min without request", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: list("cpu", "50m")}, nil, nil,
			"minimum cpu usage per Container is 50m.  No request is specified"},
		{"min under limit", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: list("cpu", "50m")}, list("cpu", "60m"), list("cpu", "40m"),
			"minimum cpu usage per Container is 50m, but limit is 40m"},
		{"max without limit", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("memory", "1Gi")}, list("memory", "1Mi"), nil,
			"maximum memory usage per Container is 1Gi.  No limit is specified"},
		{"ratio without request", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: list("cpu", "2")}, nil, list("cpu", "1"),
			"cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"},
		{"ratio exceeded", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: list("cpu", "1500m")}, list("cpu", "100m"), list("cpu", "200m"),
			"cpu max limit to request ratio per Container is 1500m, but provided ratio is 2.000000"},
		{"ratio within", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: list("cpu", "2")}, list("cpu", "100m"), list("cpu", "200m"), ""},
		{"pod sums containers", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("cpu", "1")}, list("cpu", "600m"), list("cpu", "600m"),
			"maximum cpu usage per Pod is 1, but limit is 1200m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := corev1.Container{Name: "a", Resources: corev1.ResourceRequirements{Requests: tc.requests, Limits: tc.limits}}
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
			if tc.item.Type == corev1.LimitTypePod {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "b", Resources: c.Resources})
			}
			lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{tc.item}}}
			err := aggregate(validatePod(pod, lr))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestApplyDefaultsInitContainers(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Limits: list("cpu", "1")}}},
		Containers:     []corev1.Container{{Name: "main"}},
	}}
	lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: list("cpu", "500m"), DefaultRequest: list("cpu", "100m"),
	}}}}
	if !applyDefaults(pod, lr) {
		t.Fatal("nothing applied")
	}
	want := "LimitRanger plugin set: cpu request for container main; cpu limit for container main; cpu request for init container init"
	if got := pod.Annotations[Annotation]; got != want {
		t.Errorf("annotation %q, want %q", got, want)
	}
	if got := pod.Spec.InitContainers[0].Resources.Limits["cpu"].String(); got != "1" {
		t.Errorf("init limit overwritten: %s", got)
	}
}
