package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// podResources are the pod quota names without a prefix rule.
var podResources = []string{
	"count/pods", string(corev1.ResourceCPU), string(corev1.ResourceMemory), string(corev1.ResourceEphemeralStorage),
	string(corev1.ResourceRequestsCPU), string(corev1.ResourceRequestsMemory), string(corev1.ResourceRequestsEphemeralStorage),
	string(corev1.ResourceLimitsCPU), string(corev1.ResourceLimitsMemory), string(corev1.ResourceLimitsEphemeralStorage),
	string(corev1.ResourcePods),
}

// constrainedResources must be requested by every container of a pod that a
// quota on them charges (Kubernetes keeps this for compatibility).
var constrainedResources = []string{
	string(corev1.ResourceRequestsCPU), string(corev1.ResourceRequestsMemory), string(corev1.ResourceLimitsCPU),
	string(corev1.ResourceLimitsMemory), string(corev1.ResourceCPU), string(corev1.ResourceMemory),
}

// podEvaluator charges pods: the object count always, compute resources
// while the pod is not terminal.
type podEvaluator struct{}

func (podEvaluator) GroupResource() api.GroupResource { return api.GroupResource{Resource: "pods"} }

// Handles: creates, and updates that move a pod in or out of the
// Terminating scope.
func (podEvaluator) Handles(op admission.Operation, subresource string, obj, old map[string]any) bool {
	if subresource != "" {
		return false
	}
	if op == admission.Update {
		p, err1 := registry.FromMap[corev1.Pod](obj)
		o, err2 := registry.FromMap[corev1.Pod](old)
		return err1 == nil && err2 == nil && isTerminating(p) != isTerminating(o)
	}
	return op == admission.Create
}

func (podEvaluator) MatchingResources(names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(podResources, n) || strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) ||
			strings.HasPrefix(n, corev1.DefaultResourceRequestsPrefix+corev1.ResourceHugePagesPrefix) ||
			isExtendedResourceNameForQuota(n) {
			out = append(out, n)
		}
	}
	return out
}

// isExtendedResourceNameForQuota reports whether name is requests.<extended>.
func isExtendedResourceNameForQuota(name string) bool {
	return strings.HasPrefix(name, corev1.DefaultResourceRequestsPrefix) &&
		corev1.IsExtendedResourceName(strings.TrimPrefix(name, corev1.DefaultResourceRequestsPrefix))
}

func (podEvaluator) MatchesScope(req corev1.ScopedResourceSelectorRequirement, obj map[string]any) (bool, error) {
	p, err := registry.FromMap[corev1.Pod](obj)
	if err != nil {
		return false, fmt.Errorf("decode pod: %w", err)
	}
	switch req.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(p), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(p), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return isBestEffort(p), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !isBestEffort(p), nil
	case corev1.ResourceQuotaScopePriorityClass:
		return matchValues(req, p.Spec.PriorityClassName), nil
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespacePodAffinity(p), nil
	}
	return false, nil
}

func (podEvaluator) Usage(obj map[string]any, now time.Time) (corev1.ResourceList, error) {
	p, err := registry.FromMap[corev1.Pod](obj)
	if err != nil {
		return nil, fmt.Errorf("decode pod: %w", err)
	}
	return PodUsage(p, now), nil
}

// PodUsage is what pod consumes at now: count/pods always (object counts
// track everything stored), pods and compute resources unless the pod is
// terminal or stuck terminating past its grace period.
func PodUsage(pod *corev1.Pod, now time.Time) corev1.ResourceList {
	out := corev1.ResourceList{"count/pods": one}
	if !chargesCompute(pod, now) {
		return out
	}
	return Add(out, computeUsage(PodRequests(pod), PodLimits(pod)))
}

// chargesCompute reports whether pod's compute resources count: Kubernetes'
// QuotaV1Pod.
func chargesCompute(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		end := pod.DeletionTimestamp.Add(time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second)
		if now.After(end) {
			return false
		}
	}
	return true
}

// computeUsage turns requests and limits into quota names: cpu and
// requests.cpu for a cpu request, limits.cpu for its limit, the same for
// memory and ephemeral-storage, requests.hugepages-* and requests.<extended>.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{string(corev1.ResourcePods): one}
	for _, r := range []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory), string(corev1.ResourceEphemeralStorage)} {
		if q, ok := requests[r]; ok {
			out[r] = q
			out[corev1.DefaultResourceRequestsPrefix+r] = q
		}
		if q, ok := limits[r]; ok {
			out["limits."+r] = q
		}
	}
	for name, q := range requests {
		if corev1.IsHugePageResourceName(name) {
			out[name] = q
			out[corev1.DefaultResourceRequestsPrefix+name] = q
		}
		if corev1.IsExtendedResourceName(name) {
			out[corev1.DefaultResourceRequestsPrefix+name] = q
		}
	}
	return out
}

// PodRequests is the pod's effective requests, as the scheduler sees them:
// the containers' sum (sidecar init containers included), or the largest
// init container step if larger, plus overhead; pod-level resources replace
// cpu and memory when set.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	return podAggregate(pod, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests })
}

// PodLimits is PodRequests for limits.
func PodLimits(pod *corev1.Pod) corev1.ResourceList {
	return podAggregate(pod, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}

func podAggregate(pod *corev1.Pod, of func(*corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		sum = Add(sum, of(&pod.Spec.Containers[i].Resources))
	}
	sidecars, initMax := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		step := of(&c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum = Add(sum, step)
			sidecars = Add(sidecars, step)
			step = sidecars
		} else {
			step = Add(step, sidecars)
		}
		initMax = maxOf(initMax, step)
	}
	sum = maxOf(sum, initMax)
	if pod.Spec.Resources != nil {
		for k, v := range of(pod.Spec.Resources) {
			if k == string(corev1.ResourceCPU) || k == string(corev1.ResourceMemory) {
				sum[k] = v
			}
		}
	}
	if len(pod.Spec.Overhead) > 0 {
		sum = Add(sum, Mask(pod.Spec.Overhead, Names(sum)))
	}
	return sum
}

// maxOf returns the larger value of each name of a and b.
func maxOf(a, b corev1.ResourceList) corev1.ResourceList {
	out := Add(corev1.ResourceList{}, a)
	for k, v := range b {
		if cur, ok := out[k]; !ok || v.Cmp(cur) > 0 {
			out[k] = v
		}
	}
	return out
}

// Constraints: under a quota on cpu or memory (requests or limits), every
// container must state them.
func (podEvaluator) Constraints(required []string, obj map[string]any) error {
	p, err := registry.FromMap[corev1.Pod](obj)
	if err != nil {
		return fmt.Errorf("decode pod: %w", err)
	}
	if p.Spec.Resources != nil && (len(p.Spec.Resources.Requests) > 0 || len(p.Spec.Resources.Limits) > 0) {
		return nil // pod-level resources satisfy the requirement
	}
	req := Intersection(required, constrainedResources)
	missing := map[string][]string{}
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			usage := computeUsage(cs[i].Resources.Requests, cs[i].Resources.Limits)
			for _, r := range req {
				if _, ok := usage[r]; !ok && !slices.Contains(missing[r], cs[i].Name) {
					missing[r] = append(missing[r], cs[i].Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range slices.Sorted(func(yield func(string) bool) {
		for k := range missing {
			if !yield(k) {
				return
			}
		}
	}) {
		names := missing[r]
		slices.Sort(names)
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(names, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// isTerminating reports whether the pod has an active deadline.
func isTerminating(p *corev1.Pod) bool {
	return p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
}

// isBestEffort reports whether no container requests or limits cpu or memory.
func isBestEffort(p *corev1.Pod) bool {
	if p.Spec.Resources != nil && (len(p.Spec.Resources.Requests) > 0 || len(p.Spec.Resources.Limits) > 0) {
		return false
	}
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			for _, l := range []corev1.ResourceList{cs[i].Resources.Requests, cs[i].Resources.Limits} {
				for _, r := range []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory)} {
					if q, ok := l[r]; ok && q.Sign() > 0 {
						return false
					}
				}
			}
		}
	}
	return true
}

// usesCrossNamespacePodAffinity reports whether a pod (anti-)affinity term
// names namespaces or a namespace selector.
func usesCrossNamespacePodAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(t *corev1.PodAffinityTerm) bool { return len(t.Namespaces) > 0 || t.NamespaceSelector != nil }
	var required []corev1.PodAffinityTerm
	var preferred []corev1.WeightedPodAffinityTerm
	if a.PodAffinity != nil {
		required = append(required, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		preferred = append(preferred, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	if a.PodAntiAffinity != nil {
		required = append(required, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		preferred = append(preferred, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	for i := range required {
		if cross(&required[i]) {
			return true
		}
	}
	for i := range preferred {
		if cross(&preferred[i].PodAffinityTerm) {
			return true
		}
	}
	return false
}
