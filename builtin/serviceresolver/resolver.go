package serviceresolver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
)

// Lister returns the stored objects (JSON) of a resource in a namespace
// ("" for all), with the list's resource version.
type Lister func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error)

// ErrNoEndpoints: the Service has no ready endpoint for the port.
var ErrNoEndpoints = errors.New("service has no ready endpoints")

// ErrServiceNotFound: there is no such Service.
var ErrServiceNotFound = errors.New("service not found")

var (
	servicesGVR       = api.GroupVersionResource{Version: "v1", Resource: "services"}
	endpointSlicesGVR = api.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// Resolver resolves Service names to endpoints.
type Resolver struct {
	// List reads Services and EndpointSlices. Required.
	List Lister
	// Dialer connects; nil uses a net.Dialer with a 10 s timeout.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ServiceName splits a Service's DNS name, NAME.NAMESPACE.svc or
// NAME.NAMESPACE.svc.cluster.local; ok is false for any other host.
func ServiceName(host string) (namespace, name string, ok bool) {
	host = strings.TrimSuffix(strings.TrimSuffix(host, "."), ".cluster.local")
	rest, found := strings.CutSuffix(host, ".svc")
	if !found {
		return "", "", false
	}
	name, namespace, found = strings.Cut(rest, ".")
	if !found || name == "" || namespace == "" || strings.Contains(namespace, ".") {
		return "", "", false
	}
	return namespace, name, true
}

// Dial connects to addr; a Service's name is resolved to one of its ready
// endpoints (see the package documentation).
func (r *Resolver) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return r.dial(ctx, network, addr)
	}
	namespace, name, ok := ServiceName(host)
	if !ok {
		return r.dial(ctx, network, addr)
	}
	port, err := strconv.ParseInt(portText, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("service %s/%s: port %q: %w", namespace, name, portText, err)
	}
	targets, err := r.Resolve(ctx, namespace, name, int32(port))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, t := range targets {
		c, err := r.dial(ctx, network, t)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("service %s/%s port %d: %w", namespace, name, port, errors.Join(errs...))
}

func (r *Resolver) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if r.Dialer != nil {
		return r.Dialer(ctx, network, addr)
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext(ctx, network, addr)
}

// Resolve returns the addresses (host:port) that port of Service
// namespace/name leads to, in random order: its ready endpoints, or its
// external name.
func (r *Resolver) Resolve(ctx context.Context, namespace, name string, port int32) ([]string, error) {
	svc, err := r.Service(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if svc.Spec.Type == "ExternalName" {
		return []string{net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Port == port && (p.Protocol == "" || p.Protocol == "TCP") {
			sp = p
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("service %s/%s has no TCP port %d", namespace, name, port)
	}
	items, _, err := r.List(ctx, endpointSlicesGVR, namespace)
	if err != nil {
		return nil, fmt.Errorf("list endpointslices of %s: %w", namespace, err)
	}
	var out []string
	for _, b := range items {
		var es discoveryv1.EndpointSlice
		if err := json.Unmarshal(b, &es); err != nil {
			return nil, fmt.Errorf("decode endpointslice: %w", err)
		}
		if es.Labels["kubernetes.io/service-name"] != name || es.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		target, ok := slicePort(es.Ports, sp.Name)
		if !ok {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(int(target))))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("service %s/%s port %d: %w", namespace, name, port, ErrNoEndpoints)
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// slicePort is the port of an EndpointSlice named like the Service port.
func slicePort(ports []discoveryv1.EndpointPort, name string) (int32, bool) {
	for _, p := range ports {
		pn := ""
		if p.Name != nil {
			pn = *p.Name
		}
		if pn == name && p.Port != nil && (p.Protocol == nil || *p.Protocol == "TCP") {
			return *p.Port, true
		}
	}
	return 0, false
}

// Service returns Service namespace/name; ErrServiceNotFound when there is
// none.
func (r *Resolver) Service(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	items, _, err := r.List(ctx, servicesGVR, namespace)
	if err != nil {
		return nil, fmt.Errorf("list services of %s: %w", namespace, err)
	}
	for _, b := range items {
		var s corev1.Service
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("decode service: %w", err)
		}
		if s.Name == name {
			return &s, nil
		}
	}
	return nil, fmt.Errorf("service %s/%s: %w", namespace, name, ErrServiceNotFound)
}
