package endpoints

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

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

// includePod is Kubernetes' ShouldPodBeInEndpoints: an IP, not terminal, and
// not terminating unless includeTerminating.
func includePod(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.PodIP == "" {
		return false
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// findPort resolves a Service port's targetPort on pod.
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

func portsKey(ports []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%s/%s/%d/%s|", p.Name, p.Protocol, p.Port, deref(p.AppProtocol))
	}
	return b.String()
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// desiredSubsets computes the subsets of svc from the pods of its namespace,
// keeping at most maxAddresses addresses; truncated reports whether some were
// dropped.
func desiredSubsets(svc *corev1.Service, pods []*corev1.Pod, maxAddresses int) (subsets []corev1.EndpointSubset, truncated bool) {
	tolerateUnready := svc.Spec.PublishNotReadyAddresses
	byPorts := map[string]*corev1.EndpointSubset{}
	var order []string
	total := 0
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	for _, pod := range sorted {
		if !selects(svc.Spec.Selector, pod.Labels) || !includePod(pod, tolerateUnready) {
			continue
		}
		var ports []corev1.EndpointPort
		for _, sp := range svc.Spec.Ports {
			num, ok := findPort(pod, sp)
			if !ok {
				continue
			}
			ports = append(ports, corev1.EndpointPort{Name: sp.Name, Port: num, Protocol: cmp.Or(sp.Protocol, corev1.ProtocolTCP), AppProtocol: sp.AppProtocol})
		}
		if len(ports) == 0 && !(len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == clusterIPNone) {
			continue // no port resolved: nothing to serve (headless without ports excepted)
		}
		if total >= maxAddresses {
			truncated = true
			continue
		}
		total++
		slices.SortFunc(ports, func(a, b corev1.EndpointPort) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port))
		})
		k := portsKey(ports)
		ss, ok := byPorts[k]
		if !ok {
			ss = &corev1.EndpointSubset{Ports: ports}
			byPorts[k] = ss
			order = append(order, k)
		}
		addr := corev1.EndpointAddress{
			IP:        pod.Status.PodIP,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		}
		if pod.Spec.NodeName != "" {
			addr.NodeName = api.Ptr(pod.Spec.NodeName)
		}
		if svc.Spec.ClusterIP == clusterIPNone && pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
			addr.Hostname = pod.Spec.Hostname
		}
		if tolerateUnready || podReady(pod) {
			ss.Addresses = append(ss.Addresses, addr)
		} else {
			ss.NotReadyAddresses = append(ss.NotReadyAddresses, addr)
		}
	}
	slices.Sort(order)
	byIP := func(a, b corev1.EndpointAddress) int {
		return cmp.Or(cmp.Compare(a.IP, b.IP), cmp.Compare(a.TargetRef.UID, b.TargetRef.UID))
	}
	for _, k := range order {
		ss := byPorts[k]
		slices.SortFunc(ss.Addresses, byIP)
		slices.SortFunc(ss.NotReadyAddresses, byIP)
		subsets = append(subsets, *ss)
	}
	return subsets, truncated
}
