package proxy

import (
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
)

// frontend is one address the proxy listens on and where it forwards to.
type frontend struct {
	// Service names the Service port ("ns/name:port"), for logs.
	Service string
	// Backends are "ip:port" of the endpoints to use, sorted.
	Backends []string
	// Affinity is how long a client IP sticks to the endpoint it was sent to
	// (the Service's sessionAffinity ClientIP and its timeout); 0: none.
	Affinity time.Duration
	// sticky is the Service port's affinity table, shared by its listeners
	// (set by the proxy, not by desired).
	sticky *stickyTable
}

// labelServiceProxyName marks a Service another proxy serves (the cluster DNS
// server serves kube-system/kube-dns itself); like kube-proxy, this proxy
// leaves such Services alone.
const labelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// udpPrefix marks the listening addresses of UDP ports ("udp/ip:port"; TCP
// ones are plain "ip:port").
const udpPrefix = "udp/"

// desired computes the wanted listeners ("ip:port" or "udp/ip:port" →
// frontend) from the
// Services and EndpointSlices in the caches. It is a pure function.
func desired(svcs []*corev1.Service, epSlices []*discoveryv1.EndpointSlice, nodePortAddrs []string) map[string]frontend {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range epSlices {
		name := s.Labels[discoveryv1.LabelServiceName]
		if name == "" || s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		k := s.Namespace + "/" + name
		bySvc[k] = append(bySvc[k], s)
	}
	out := map[string]frontend{}
	for _, svc := range svcs {
		if svc.Labels[labelServiceProxyName] != "" {
			continue
		}
		ips := clusterIPs(svc)
		if len(ips) == 0 {
			continue
		}
		key := svc.Namespace + "/" + svc.Name
		for _, sp := range svc.Spec.Ports {
			prefix := ""
			switch sp.Protocol {
			case "", corev1.ProtocolTCP:
			case corev1.ProtocolUDP:
				prefix = udpPrefix
			default:
				continue // SCTP is not proxied
			}
			fe := frontend{
				Service:  key + ":" + portLabel(sp),
				Backends: backends(bySvc[key], sp.Name, protocol(sp)),
				Affinity: affinity(svc),
			}
			for _, ip := range ips {
				out[prefix+net.JoinHostPort(ip, strconv.Itoa(int(sp.Port)))] = fe
			}
			if sp.NodePort != 0 && (svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer) {
				for _, a := range nodePortAddrs {
					out[prefix+net.JoinHostPort(a, strconv.Itoa(int(sp.NodePort)))] = fe
				}
			}
		}
	}
	return out
}

// protocol is sp's protocol (TCP when unset).
func protocol(sp corev1.ServicePort) corev1.Protocol {
	if sp.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return sp.Protocol
}

// affinity is the Service's client IP affinity timeout (0 without).
func affinity(svc *corev1.Service) time.Duration {
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		return 0
	}
	if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil && *c.ClientIP.TimeoutSeconds > 0 {
		return time.Duration(*c.ClientIP.TimeoutSeconds) * time.Second
	}
	return corev1.DefaultClientIPAffinitySeconds * time.Second
}

// clusterIPs returns the IPv4 cluster IPs of a Service that has some (not
// headless, not ExternalName).
func clusterIPs(svc *corev1.Service) []string {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	var out []string
	for _, s := range ips {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			out = append(out, a.String())
		}
	}
	return out
}

func portLabel(sp corev1.ServicePort) string {
	if sp.Name != "" {
		return sp.Name
	}
	return strconv.Itoa(int(sp.Port))
}

// backends returns the sorted "ip:port" addresses serving the Service port
// named portName: the ready endpoints or, when none is ready, the serving
// and terminating ones.
func backends(epSlices []*discoveryv1.EndpointSlice, portName string, proto corev1.Protocol) []string {
	ready, fallback := map[string]bool{}, map[string]bool{}
	for _, s := range epSlices {
		port, ok := endpointPort(s.Ports, portName, proto)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 {
				continue
			}
			addr := net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port)))
			c := ep.Conditions
			switch {
			case c.Ready == nil || *c.Ready:
				ready[addr] = true
			case c.Serving != nil && *c.Serving && c.Terminating != nil && *c.Terminating:
				fallback[addr] = true
			}
		}
	}
	if len(ready) == 0 {
		ready = fallback
	}
	return sortedKeys(ready)
}

// endpointPort finds the TCP port named name in a slice's ports.
func endpointPort(ports []discoveryv1.EndpointPort, name string, proto corev1.Protocol) (int32, bool) {
	for _, p := range ports {
		n, pp := "", corev1.ProtocolTCP
		if p.Name != nil {
			n = *p.Name
		}
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if n != name || p.Port == nil || pp != proto {
			continue
		}
		return *p.Port, true
	}
	return 0, false
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

// hostedIPs returns the cluster IPs the proxy must add to its interface: the
// IPv4 cluster IPs that are not loopback addresses (the whole of 127.0.0.0/8
// is local already). It is a pure function.
func hostedIPs(svcs []*corev1.Service) []netip.Addr {
	set := map[netip.Addr]bool{}
	for _, svc := range svcs {
		for _, s := range clusterIPs(svc) {
			if a, err := netip.ParseAddr(s); err == nil && !a.IsLoopback() && !a.IsUnspecified() {
				set[a] = true
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	return slices.SortedFunc(maps.Keys(set), func(a, b netip.Addr) int { return a.Compare(b) })
}
