package v1

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestPodQOS(t *testing.T) {
	t.Parallel()
	q := func(s string) api.Quantity { return api.Quantity{S: s} }
	res := func(req, lim ResourceList) Container {
		return Container{Name: "c", Resources: ResourceRequirements{Requests: req, Limits: lim}}
	}
	both := ResourceList{"cpu": q("100m"), "memory": q("64Mi")}
	for _, tc := range []struct {
		name  string
		inits []Container
		ctrs  []Container
		want  PodQOSClass
	}{
		{"nothing", nil, []Container{res(nil, nil)}, PodQOSBestEffort},
		{"zero requests count as none", nil, []Container{res(ResourceList{"cpu": q("0")}, nil)}, PodQOSBestEffort},
		{"other resources do not count", nil, []Container{res(ResourceList{"ephemeral-storage": q("1Gi")}, nil)}, PodQOSBestEffort},
		{"limits equal requests", nil, []Container{res(both, both)}, PodQOSGuaranteed},
		{"requests only", nil, []Container{res(both, nil)}, PodQOSBurstable},
		{"memory limit missing", nil, []Container{res(ResourceList{"cpu": q("1")}, ResourceList{"cpu": q("1")})}, PodQOSBurstable},
		{"requests below limits", nil, []Container{res(ResourceList{"cpu": q("50m"), "memory": q("64Mi")}, both)}, PodQOSBurstable},
		{"equal values in other units", nil, []Container{res(ResourceList{"cpu": q("0.1"), "memory": q("67108864")}, both)}, PodQOSGuaranteed},
		{"one container without limits", nil, []Container{res(both, both), res(nil, nil)}, PodQOSBurstable},
		{"init container counts", []Container{res(both, nil)}, []Container{res(both, both)}, PodQOSBurstable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := PodQOS(&PodSpec{InitContainers: tc.inits, Containers: tc.ctrs}); got != tc.want {
				t.Errorf("PodQOS = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDefaultPodSetsQOSClassAfterRequestDefaults(t *testing.T) {
	t.Parallel()
	lim := ResourceList{"cpu": {S: "1"}, "memory": {S: "1Gi"}}
	p := &Pod{Spec: PodSpec{Containers: []Container{{Name: "c", Resources: ResourceRequirements{Limits: lim}}}}}
	p.Status.QOSClass = PodQOSBestEffort // whatever a client sent
	DefaultPod(p)
	if p.Status.QOSClass != PodQOSGuaranteed {
		t.Fatalf("qosClass = %s, want Guaranteed (requests default to limits)", p.Status.QOSClass)
	}
}
