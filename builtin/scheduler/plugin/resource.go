package plugin

import (
	"maps"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// Default requests used for scoring pods that request nothing (kube-scheduler's
// DefaultMilliCPURequest and DefaultMemoryRequest), so that such pods still
// spread.
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is an amount of compute resources in integer units: millicores for
// CPU, bytes for memory and ephemeral storage, counts for pods and scalar
// (extended, hugepages) resources.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int64
	// ScalarResources holds every other resource by name.
	ScalarResources map[string]int64
}

// NewResource converts a ResourceList; malformed quantities count as zero
// (the API server validates them).
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds every quantity of rl.
func (r *Resource) Add(rl corev1.ResourceList) {
	for name, q := range rl {
		r.addOne(name, q, 1)
	}
}

func (r *Resource) addOne(name string, q api.Quantity, sign int64) {
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU:
		v, _ := q.MilliValue()
		r.MilliCPU += sign * v
	case corev1.ResourceMemory:
		v, _ := q.Value()
		r.Memory += sign * v
	case corev1.ResourceEphemeralStorage:
		v, _ := q.Value()
		r.EphemeralStorage += sign * v
	case corev1.ResourcePods:
		v, _ := q.Value()
		r.AllowedPodNumber += sign * v
	default:
		v, _ := q.Value()
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[name] += sign * v
	}
}

// AddResource adds o to r.
func (r *Resource) AddResource(o *Resource) {
	if o == nil {
		return
	}
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[k] += v
	}
}

// SubResource subtracts o from r.
func (r *Resource) SubResource(o *Resource) {
	if o == nil {
		return
	}
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[k] -= v
	}
}

// SetMaxResource raises each of r's values to o's where o's is larger.
func (r *Resource) SetMaxResource(o *Resource) {
	if o == nil {
		return
	}
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	r.AllowedPodNumber = max(r.AllowedPodNumber, o.AllowedPodNumber)
	for k, v := range o.ScalarResources {
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[k] = max(r.ScalarResources[k], v)
	}
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	if r == nil {
		return nil
	}
	c := *r
	c.ScalarResources = maps.Clone(r.ScalarResources)
	return &c
}

// clone returns a copy by value with its own ScalarResources.
func (r Resource) clone() Resource {
	r.ScalarResources = maps.Clone(r.ScalarResources)
	return r
}

// Get returns the amount of a named resource in the units above.
func (r *Resource) Get(name string) int64 {
	switch corev1.ResourceName(name) {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	case corev1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case corev1.ResourcePods:
		return r.AllowedPodNumber
	default:
		return r.ScalarResources[name]
	}
}

// IsZero reports whether every amount is zero.
func (r *Resource) IsZero() bool {
	if r.MilliCPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || r.AllowedPodNumber != 0 {
		return false
	}
	for _, v := range r.ScalarResources {
		if v != 0 {
			return false
		}
	}
	return true
}

// ComputePodRequests returns the effective requests of a pod the way
// Kubernetes computes them: the sum of the regular containers plus restartable
// (sidecar) init containers, raised to the largest requirement of any
// init-container step, plus the pod overhead; pod-level resources, when set,
// replace the container totals for the resources they name.
//
// nonZero applies DefaultMilliCPURequest/DefaultMemoryRequest to containers
// that request no CPU/memory, which is what scoring uses.
func ComputePodRequests(pod *corev1.Pod, nonZero bool) *Resource {
	containerReq := func(c *corev1.Container) *Resource {
		r := NewResource(c.Resources.Requests)
		if nonZero {
			if _, ok := c.Resources.Requests[string(corev1.ResourceCPU)]; !ok {
				r.MilliCPU = DefaultMilliCPURequest
			}
			if _, ok := c.Resources.Requests[string(corev1.ResourceMemory)]; !ok {
				r.Memory = DefaultMemoryRequest
			}
		}
		return r
	}
	reqs := &Resource{}
	for i := range pod.Spec.Containers {
		reqs.AddResource(containerReq(&pod.Spec.Containers[i]))
	}
	sidecars := &Resource{}
	initMax := &Resource{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cr := containerReq(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar runs alongside later init containers and the main ones.
			reqs.AddResource(cr)
			sidecars.AddResource(cr)
			initMax.SetMaxResource(sidecars)
			continue
		}
		step := sidecars.Clone()
		step.AddResource(cr)
		initMax.SetMaxResource(step)
	}
	reqs.SetMaxResource(initMax)
	if pr := pod.Spec.Resources; pr != nil && len(pr.Requests) > 0 {
		for name, q := range pr.Requests {
			switch corev1.ResourceName(name) {
			case corev1.ResourceCPU:
				reqs.MilliCPU, _ = q.MilliValue()
			case corev1.ResourceMemory:
				reqs.Memory, _ = q.Value()
			}
		}
	}
	reqs.Add(pod.Spec.Overhead)
	return reqs
}
