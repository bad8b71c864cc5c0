package v1

import "github.com/converge-dev/converge/framework/api"

// PodQOS computes a pod's quality-of-service class from the cpu and memory
// requests and limits of its containers and init containers, as Kubernetes
// does: BestEffort when none is set (zero values do not count), Guaranteed
// when every container limits both cpu and memory and the summed requests
// equal the summed limits, else Burstable.
func PodQOS(spec *PodSpec) PodQOSClass {
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
