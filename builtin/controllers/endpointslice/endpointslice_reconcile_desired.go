package endpointslice

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
)

// endpointGroup is the endpoints sharing one address type and one resolved
// port set: the unit that slices are cut from.
type endpointGroup struct {
	addressType discoveryv1.AddressType
	ports       []discoveryv1.EndpointPort
	endpoints   []discoveryv1.Endpoint // sorted by pod name
}

// key identifies the group of a slice or of desired endpoints.
func groupKey(at discoveryv1.AddressType, ports []discoveryv1.EndpointPort) string {
	var b strings.Builder
	b.WriteString(string(at))
	for _, p := range sortedPorts(ports) {
		fmt.Fprintf(&b, "|%s/%s/%d/%s", deref(p.Name), derefProto(p.Protocol), deref(p.Port), deref(p.AppProtocol))
	}
	return b.String()
}

func sortedPorts(ports []discoveryv1.EndpointPort) []discoveryv1.EndpointPort {
	out := slices.Clone(ports)
	slices.SortFunc(out, func(a, b discoveryv1.EndpointPort) int {
		return cmp.Or(cmp.Compare(deref(a.Name), deref(b.Name)), cmp.Compare(deref(a.Port), deref(b.Port)),
			cmp.Compare(derefProto(a.Protocol), derefProto(b.Protocol)))
	})
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func derefProto(p *corev1.Protocol) corev1.Protocol {
	if p == nil || *p == "" {
		return corev1.ProtocolTCP
	}
	return *p
}

// endpointKey identifies an endpoint across reconciles: its pod and address.
func endpointKey(ep discoveryv1.Endpoint) string {
	name := ""
	if ep.TargetRef != nil {
		name = ep.TargetRef.Name
	}
	return name + "|" + strings.Join(ep.Addresses, ",")
}

// selects reports whether a service selector (non-empty) matches pod labels.
func selects(selector, lbls map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if got, ok := lbls[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// podReady reports whether the pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// includePod reports whether pod belongs in a Service's endpoints: it has an
// IP and is not terminal (Kubernetes' ShouldPodBeInEndpoints with terminating
// pods included, as EndpointSlices carry the terminating condition).
func includePod(pod *corev1.Pod) bool {
	if pod.Status.PodIP == "" {
		return false
	}
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// findPort resolves a Service port's targetPort on pod: a number is used as
// is, a name must match a container port of the same protocol.
func findPort(pod *corev1.Pod, sp corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type == api.String {
		proto := cmp.Or(sp.Protocol, corev1.ProtocolTCP)
		for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for _, c := range cs {
				for _, p := range c.Ports {
					if p.Name == tp.StrVal && cmp.Or(p.Protocol, corev1.ProtocolTCP) == proto {
						return p.ContainerPort, true
					}
				}
			}
		}
		return 0, false
	}
	if tp.IntVal == 0 {
		return sp.Port, true
	}
	return tp.IntVal, true
}

// addressTypeOf returns IPv6 for an IPv6 address and IPv4 otherwise.
func addressTypeOf(ip string) discoveryv1.AddressType {
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

// serviceAddressType is the address type of a Service's placeholder slice.
func serviceAddressType(svc *corev1.Service) discoveryv1.AddressType {
	if len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

// podEndpoint builds the endpoint of pod for svc; zoneOf returns the zone
// label of a node that exists.
func podEndpoint(svc *corev1.Service, pod *corev1.Pod, zoneOf func(node string) (string, bool)) discoveryv1.Endpoint {
	serving := svc.Spec.PublishNotReadyAddresses || podReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discoveryv1.Endpoint{
		Addresses: []string{pod.Status.PodIP},
		Conditions: discoveryv1.EndpointConditions{
			Ready: api.Ptr(ready), Serving: api.Ptr(serving), Terminating: api.Ptr(terminating),
		},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = api.Ptr(pod.Spec.NodeName)
		if zone, ok := zoneOf(pod.Spec.NodeName); ok {
			ep.Zone = api.Ptr(zone)
		}
	}
	if svc.Spec.ClusterIP == clusterIPNone && pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
		ep.Hostname = api.Ptr(pod.Spec.Hostname)
	}
	return ep
}

// desiredGroups computes the endpoint groups of svc from the pods of its
// namespace. With no endpoint at all it returns the placeholder group (no
// ports, no endpoints).
func desiredGroups(svc *corev1.Service, pods []*corev1.Pod, zoneOf func(node string) (string, bool)) map[string]*endpointGroup {
	groups := map[string]*endpointGroup{}
	for _, pod := range pods {
		if !selects(svc.Spec.Selector, pod.Labels) || !includePod(pod) {
			continue
		}
		ports := make([]discoveryv1.EndpointPort, 0, len(svc.Spec.Ports))
		for _, sp := range svc.Spec.Ports {
			num, ok := findPort(pod, sp)
			if !ok {
				continue // Kubernetes leaves the pod out of this port only
			}
			ports = append(ports, discoveryv1.EndpointPort{
				Name: api.Ptr(sp.Name), Protocol: api.Ptr(cmp.Or(sp.Protocol, corev1.ProtocolTCP)),
				Port: api.Ptr(num), AppProtocol: sp.AppProtocol,
			})
		}
		ports = sortedPorts(ports)
		at := addressTypeOf(pod.Status.PodIP)
		k := groupKey(at, ports)
		g, ok := groups[k]
		if !ok {
			g = &endpointGroup{addressType: at, ports: ports}
			groups[k] = g
		}
		g.endpoints = append(g.endpoints, podEndpoint(svc, pod, zoneOf))
	}
	if len(groups) == 0 {
		at := serviceAddressType(svc)
		groups[groupKey(at, nil)] = &endpointGroup{addressType: at, ports: []discoveryv1.EndpointPort{}}
	}
	for _, g := range groups {
		slices.SortFunc(g.endpoints, func(a, b discoveryv1.Endpoint) int { return cmp.Compare(endpointKey(a), endpointKey(b)) })
	}
	return groups
}
