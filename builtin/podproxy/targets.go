package podproxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/podlog"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// addressNotAllowed refuses a target no proxy may reach.
func addressNotAllowed() error { return apierrors.NewBadRequest("address not allowed") }

// podTarget is pod ns/name's IP on port, or else its first containerPort.
func (p *Proxies) podTarget(ctx context.Context, ns, scheme, name, port string) (*target, error) {
	pod, err := mustRead[corev1.Pod](ctx, p.o.Store, podPrefix+ns+"/"+name, "pods", name)
	if err != nil {
		return nil, err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	ip := net.ParseIP(podIP)
	if ip == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s has no IP address", pod.Name))
	}
	if err := p.checkPodAddress(ctx, pod, ip); err != nil {
		return nil, err
	}
	return &target{url: hostURL(scheme, podIP, port), transport: p.o.Transport}, nil
}

// serviceTarget is a ready endpoint of Service ns/name on port (a Service
// port's name or number), as Kubernetes picks it: a random subset with the
// port, a random ready address in it that is the IP of the pod it names.
func (p *Proxies) serviceTarget(ctx context.Context, ns, scheme, name, port string) (*target, error) {
	svc, err := mustRead[corev1.Service](ctx, p.o.Store, servicePrefix+ns+"/"+name, "services", name)
	if err != nil {
		return nil, err
	}
	portName := port
	if n, err := strconv.Atoi(port); err == nil {
		i := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return int(sp.Port) == n })
		if i < 0 {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, name))
		}
		portName = svc.Spec.Ports[i].Name
	}
	eps, _, err := read[corev1.Endpoints](ctx, p.o.Store, endpointsPrefix+ns+"/"+name)
	if err != nil {
		return nil, err
	}
	var subsets []corev1.EndpointSubset
	if eps != nil {
		subsets = eps.Subsets
	}
	for _, si := range rand.Perm(len(subsets)) {
		ss := subsets[si]
		for _, ep := range ss.Ports {
			if ep.Name != portName {
				continue
			}
			for _, ai := range rand.Perm(len(ss.Addresses)) {
				addr := ss.Addresses[ai]
				if p.validEndpoint(ctx, ns, addr) {
					return &target{url: hostURL(scheme, addr.IP, strconv.Itoa(int(ep.Port))), transport: p.o.Transport}, nil
				}
			}
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
}

// validEndpoint reports whether addr is the IP of the pod it names (only
// pods are proxied to, as in Kubernetes) and an address pods/proxy would
// reach.
func (p *Proxies) validEndpoint(ctx context.Context, ns string, addr corev1.EndpointAddress) bool {
	ref := addr.TargetRef
	if ref == nil || ref.Kind != "Pod" {
		return false
	}
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	pod, found, err := read[corev1.Pod](ctx, p.o.Store, podPrefix+ns+"/"+ref.Name)
	if err != nil || !found {
		return false
	}
	ips := []string{pod.Status.PodIP}
	for _, pi := range pod.Status.PodIPs {
		ips = append(ips, pi.IP)
	}
	ip := net.ParseIP(addr.IP)
	return ip != nil && slices.Contains(ips, addr.IP) && p.checkPodAddress(ctx, pod, ip) == nil
}

// nodeTarget is node name's agent server, or another port of its address.
func (p *Proxies) nodeTarget(ctx context.Context, _, scheme, name, port string) (*target, error) {
	node, err := mustRead[corev1.Node](ctx, p.o.Store, nodePrefix+name, "nodes", name)
	if err != nil {
		return nil, err
	}
	host, agentPort, err := podlog.NodeAddress(node)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if port == "" || port == strconv.Itoa(agentPort) {
		// The agent's own server, as Kubernetes' kubelet connection: its
		// scheme and credentials, whatever was asked.
		return &target{url: hostURL(p.o.NodeScheme, host, strconv.Itoa(agentPort)), transport: p.o.NodeTransport}, nil
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resolve node %s address %s: %v", name, host, err))
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if hostLocal(ip) || ip.IsUnspecified() || ip.IsMulticast() {
			return nil, addressNotAllowed()
		}
	}
	return &target{url: hostURL(scheme, host, port), transport: p.o.Transport}, nil
}

// checkPodAddress refuses an address no pod may have (unspecified,
// multicast), and a loopback or link-local one unless it lies in the pod
// CIDRs of the node the pod runs on (the process runtime gives pods loopback
// addresses from its node's range). Anything else on the host's loopback
// (the API server, etcd, the node agent) or a link-local address (a cloud
// metadata service) is never reachable through a proxy, whatever IP a pod's
// status claims.
func (p *Proxies) checkPodAddress(ctx context.Context, pod *corev1.Pod, ip net.IP) error {
	if ip.IsUnspecified() || ip.IsMulticast() {
		return addressNotAllowed()
	}
	if !hostLocal(ip) {
		return nil
	}
	if pod.Spec.NodeName == "" {
		return addressNotAllowed()
	}
	node, found, err := read[corev1.Node](ctx, p.o.Store, nodePrefix+pod.Spec.NodeName)
	if err != nil {
		return err
	}
	if found && inCIDRs(ip, append([]string{node.Spec.PodCIDR}, node.Spec.PodCIDRs...)) {
		return nil
	}
	return addressNotAllowed()
}

// hostLocal reports loopback and link-local addresses.
func hostLocal(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()
}

// inCIDRs reports whether ip lies in one of cidrs (unparsable ones ignored).
func inCIDRs(ip net.IP, cidrs []string) bool {
	for _, c := range cidrs {
		if _, n, err := net.ParseCIDR(c); err == nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// hostURL is scheme://host[:port] (scheme http when empty).
func hostURL(scheme, host, port string) *url.URL {
	if scheme == "" {
		scheme = "http"
	}
	if port != "" {
		return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return &url.URL{Scheme: scheme, Host: host}
}
