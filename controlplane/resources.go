package controlplane

import (
	"fmt"
	"maps"
	"net/http"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	"github.com/converge-dev/converge/builtin/eviction"
	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/builtin/podproxy"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// servedResources returns every built-in resource (builtin/api/all) with what
// the control plane adds to them, each wired here once: Service cluster IP and
// node port allocation, the pods/log, pods/eviction (disruption budgets),
// pods/proxy, services/proxy, nodes/proxy and serviceaccounts/token
// subresources,
// and the Priority and RuntimeClass admission steps of pods and PriorityClasses.
func (cp *ControlPlane) servedResources(alloc *servicenet.Allocator) ([]*registry.Resource, error) {
	logs, err := cp.podLogs()
	if err != nil {
		return nil, err
	}
	streams, err := cp.podStreams()
	if err != nil {
		return nil, err
	}
	proxies, err := cp.proxies()
	if err != nil {
		return nil, err
	}
	priority := cp.priorityAdmission()
	out := all.Resources()
	for _, r := range out {
		switch r.GroupVersionResource() {
		case corev1.GroupVersion().WithResource("services"):
			servicenet.WrapServiceResource(r, alloc)
			addSubresource(r, "proxy", proxies.Services())
		case corev1.GroupVersion().WithResource("nodes"):
			addSubresource(r, "proxy", proxies.Nodes())
		case corev1.GroupVersion().WithResource("pods"):
			addSubresource(r, "log", logs)
			addSubresource(r, "proxy", proxies.Pods())
			addSubresource(r, "eviction", eviction.Subresource{Store: cp.store})
			for name, sub := range streams {
				addSubresource(r, name, sub)
			}
			if t, ok := r.Strategy.(registry.Typed[corev1.Pod]); ok {
				r.Strategy = podStrategy{Typed: t, priority: priority, runtimeClass: cp.runtimeClassAdmission()}
			}
		case corev1.GroupVersion().WithResource("serviceaccounts"):
			if cp.security != nil {
				if token := cp.security.TokenRequest(); token != nil {
					addSubresource(r, "token", token)
				}
			}
		case schedulingv1.GroupVersion.WithResource("priorityclasses"):
			if t, ok := r.Strategy.(registry.Typed[schedulingv1.PriorityClass]); ok {
				r.Strategy = priorityClassStrategy{Typed: t, priority: priority}
			}
		}
	}
	return out, nil
}

// addSubresource adds sub as r's subresource name, leaving the resource
// description it was copied from untouched.
func addSubresource(r *registry.Resource, name string, sub registry.Subresource) {
	subs := maps.Clone(r.Subresources)
	if subs == nil {
		subs = map[string]registry.Subresource{}
	}
	subs[name] = sub
	r.Subresources = subs
}

// proxies are the pods/proxy, services/proxy and nodes/proxy subresources;
// node agents' servers are reached as pods/log reaches them (HTTPS with the
// API server's node client certificate when the control plane has a PKI).
func (cp *ControlPlane) proxies() (*podproxy.Proxies, error) {
	o := podproxy.Options{Store: cp.store}
	o.NodeScheme, o.NodeTransport = cp.nodeAgentTransport()
	p, err := podproxy.New(o)
	if err != nil {
		return nil, fmt.Errorf("proxy subresources: %w", err)
	}
	return p, nil
}

// nodeAgentTransport is how the API server reaches node agents' servers:
// HTTPS with its node client certificate when the control plane has a PKI,
// else "" and nil (the callers' plain HTTP default).
func (cp *ControlPlane) nodeAgentTransport() (string, http.RoundTripper) {
	if cp.pki == nil {
		return "", nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cp.pki.NodeClientTLS()
	return "https", tr
}

// podLogs is the pods/log subresource: it proxies to the node agent running
// the pod, over HTTPS with the API server's node client certificate when the
// control plane has a PKI (node agents then serve their logs with LogTLS),
// over plain HTTP otherwise.
func (cp *ControlPlane) podLogs() (registry.Subresource, error) {
	o := podlog.Options{NodeAddress: podlog.NodeAddressFromStore(cp.store)}
	o.Scheme, o.Transport = cp.nodeAgentTransport()
	logs, err := podlog.New(o)
	if err != nil {
		return nil, fmt.Errorf("pods/log: %w", err)
	}
	return logs, nil
}
