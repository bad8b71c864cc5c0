package v1

import (
	"math/rand/v2"
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

// podQOSByAdd is PodQOS as it was written before its sums were kept as
// rationals: with api.Quantity.Add, the reference for them.
func podQOSByAdd(spec *PodSpec) PodQOSClass {
	requests, limits := map[string]api.Quantity{}, map[string]api.Quantity{}
	guaranteed := true
	for _, cs := range [][]Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			for _, name := range []string{string(ResourceCPU), string(ResourceMemory)} {
				if q, ok := r.Requests[name]; ok && q.Sign() > 0 {
					requests[name] = requests[name].Add(q)
				}
				if q, ok := r.Limits[name]; ok && q.Sign() > 0 {
					limits[name] = limits[name].Add(q)
				} else {
					guaranteed = false
				}
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return PodQOSBestEffort
	}
	if guaranteed && len(requests) == len(limits) {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
		if guaranteed {
			return PodQOSGuaranteed
		}
	}
	return PodQOSBurstable
}

// TestPodQOSMatchesQuantityAdd checks PodQOS against podQOSByAdd on random
// pods whose quantities include sub-nanounit values (which Add rounds up),
// zeros, negatives, malformed values and every notation.
func TestPodQOSMatchesQuantityAdd(t *testing.T) {
	t.Parallel()
	values := []string{"", "0", "1", "2", "100m", "0.1", "1.5", "250m", "64Mi", "67108864", "1Gi", "1G", "1e3", "5E-2",
		"1n", "0.5n", "0.3n", "1e-10", "3e-10", "0.0000000004", "1u", "0.000001", "-1", "-100m", "abc", "1Zi", "1.0000000001"}
	rng := rand.New(rand.NewPCG(1, 2))
	list := func() ResourceList {
		if rng.IntN(4) == 0 {
			return nil
		}
		l := ResourceList{}
		for _, name := range []string{"cpu", "memory", "ephemeral-storage"} {
			if rng.IntN(3) > 0 {
				l[name] = api.Quantity{S: values[rng.IntN(len(values))]}
			}
		}
		return l
	}
	ctrs := func() []Container {
		out := make([]Container, rng.IntN(4))
		for i := range out {
			out[i] = Container{Name: "c", Resources: ResourceRequirements{Requests: list(), Limits: list()}}
		}
		return out
	}
	seen := map[PodQOSClass]int{}
	for range 20000 {
		spec := &PodSpec{Containers: ctrs(), InitContainers: ctrs()}
		if rng.IntN(3) == 0 {
			// Requests equal to limits, as Guaranteed pods have them.
			for i := range spec.Containers {
				spec.Containers[i].Resources.Requests = spec.Containers[i].Resources.Limits
			}
		}
		want, got := podQOSByAdd(spec), PodQOS(spec)
		seen[want]++
		if got != want {
			t.Fatalf("PodQOS = %s, by Quantity.Add %s: %+v", got, want, spec)
		}
	}
	for _, c := range []PodQOSClass{PodQOSBestEffort, PodQOSBurstable, PodQOSGuaranteed} {
		if seen[c] < 100 {
			t.Errorf("only %d pods of class %s", seen[c], c)
		}
	}
	// Sums that Add rounds: three 0.4n are 1.2n exactly, but 2n by Add
	// (0.4n → 1n, 1.4n → 2n, 2.4n → 3n): the classes follow Add.
	q := func(s string) api.Quantity { return api.Quantity{S: s} }
	third := ResourceList{"cpu": q("0.4n"), "memory": q("1")}
	for _, lim := range []string{"3n", "1.2n"} {
		c := Container{Name: "c", Resources: ResourceRequirements{Requests: third, Limits: ResourceList{"cpu": q(lim), "memory": q("1")}}}
		spec := &PodSpec{Containers: []Container{{Name: "a", Resources: ResourceRequirements{Requests: third, Limits: ResourceList{"cpu": q("0"), "memory": q("1")}}}, c, c}}
		spec.Containers[0].Resources.Limits = third
		if got, want := PodQOS(spec), podQOSByAdd(spec); got != want {
			t.Errorf("limits %s: PodQOS = %s, by Quantity.Add %s", lim, got, want)
		}
	}
}
