package quota

import (
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var serviceResources = []string{"count/services", string(corev1.ResourceServices),
	string(corev1.ResourceServicesLoadBalancers), string(corev1.ResourceServicesNodePorts)}

// serviceEvaluator charges services: the object, load balancers, and the
// node ports a NodePort or LoadBalancer service allocates.
type serviceEvaluator struct{}

func (serviceEvaluator) GroupResource() api.GroupResource {
	return api.GroupResource{Resource: "services"}
}

// Handles: creates and updates (a type change allocates node ports).
func (serviceEvaluator) Handles(op admission.Operation, subresource string, _, _ map[string]any) bool {
	return subresource == "" && (op == admission.Create || op == admission.Update)
}

func (serviceEvaluator) MatchingResources(names []string) []string {
	return Intersection(names, serviceResources)
}

func (serviceEvaluator) MatchesScope(corev1.ScopedResourceSelectorRequirement, map[string]any) (bool, error) {
	return false, nil
}

func (serviceEvaluator) Usage(obj map[string]any, _ time.Time) (corev1.ResourceList, error) {
	svc, err := registry.FromMap[corev1.Service](obj)
	if err != nil {
		return nil, fmt.Errorf("decode service: %w", err)
	}
	out := corev1.ResourceList{
		"count/services": one, string(corev1.ResourceServices): one,
		string(corev1.ResourceServicesLoadBalancers): zero, string(corev1.ResourceServicesNodePorts): zero,
	}
	ports := count(len(svc.Spec.Ports))
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[string(corev1.ResourceServicesNodePorts)] = ports
	case corev1.ServiceTypeLoadBalancer:
		if svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
			// Without allocation only the ports that name a node port take one.
			n := 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					n++
				}
			}
			ports = count(n)
		}
		out[string(corev1.ResourceServicesNodePorts)] = ports
		out[string(corev1.ResourceServicesLoadBalancers)] = one
	}
	return out, nil
}

func (serviceEvaluator) Constraints([]string, map[string]any) error { return nil }

// count is n as a quantity.
func count(n int) api.Quantity { return api.Quantity{S: fmt.Sprint(n)} }
