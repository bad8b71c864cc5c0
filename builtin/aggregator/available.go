package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	apiregistrationv1 "github.com/converge-dev/converge/builtin/api/apiregistration/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/serviceresolver"
	"github.com/converge-dev/converge/framework/api"
)

// Condition is an APIService's Available condition as Check finds it.
type Condition struct {
	Status  string // "True" or "False"
	Reason  string
	Message string
}

// The reasons of kube-aggregator's availability controller.
const (
	ReasonPassed               = "Passed"
	ReasonServiceNotFound      = "ServiceNotFound"
	ReasonServicePortError     = "ServicePortError"
	ReasonEndpointsNotFound    = "EndpointsNotFound"
	ReasonMissingEndpoints     = "MissingEndpoints"
	ReasonFailedDiscoveryCheck = "FailedDiscoveryCheck"
)

// discoveryTimeout bounds the discovery probe, as kube-aggregator's 5 s.
const discoveryTimeout = 5 * time.Second

var endpointSlicesGVR = api.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// Check returns the Available condition of a Service-backed APIService: its
// Service exists and has the port, a ready endpoint serves it, and
// GET /apis/GROUP/VERSION through the proxy's transport answers 2xx.
func (a *Aggregator) Check(ctx context.Context, s *apiregistrationv1.APIService) Condition {
	c, list := a.check(ctx, s)
	if list != nil {
		a.resourceLists.Store(s.Name, list)
	}
	return c
}

// Record makes c the APIService's availability for routing: requests are
// proxied only while it is True (kube-aggregator proxies only to Available
// APIServices). The control plane records a Check's result once it has
// written it to the APIService's status.
func (a *Aggregator) Record(name string, c Condition) {
	if was, ok := a.checked.Swap(name, c.Status == "True"); !ok || was.(bool) != (c.Status == "True") {
		a.opts.Logger.Info("APIService availability", "apiservice", name, "available", c.Status, "reason", c.Reason, "message", c.Message)
	}
}

// check returns the condition and, when the probe passed, the APIResourceList
// the server answered.
func (a *Aggregator) check(ctx context.Context, s *apiregistrationv1.APIService) (Condition, []byte) {
	ref := s.Spec.Service
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	svc, err := (&serviceresolver.Resolver{List: a.opts.List}).Service(ctx, ref.Namespace, ref.Name)
	if errors.Is(err, serviceresolver.ErrServiceNotFound) {
		return Condition{"False", ReasonServiceNotFound, fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)}, nil
	}
	if err != nil {
		return Condition{"False", ReasonServiceNotFound, err.Error()}, nil
	}
	if svc.Spec.Type != "ExternalName" {
		var sp *corev1.ServicePort
		for i := range svc.Spec.Ports {
			if svc.Spec.Ports[i].Port == port {
				sp = &svc.Spec.Ports[i]
			}
		}
		if sp == nil {
			return Condition{"False", ReasonServicePortError, fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)}, nil
		}
		found, ready, err := a.endpoints(ctx, ref.Namespace, ref.Name, sp.Name)
		switch {
		case err != nil:
			return Condition{"False", ReasonEndpointsNotFound, err.Error()}, nil
		case !found:
			return Condition{"False", ReasonEndpointsNotFound, fmt.Sprintf("cannot find endpoints for service/%s in %q", ref.Name, ref.Namespace)}, nil
		case !ready:
			return Condition{"False", ReasonMissingEndpoints, fmt.Sprintf("endpoints for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, sp.Name)}, nil
		}
	}
	list, err := a.probe(ctx, s)
	if err != nil {
		return Condition{"False", ReasonFailedDiscoveryCheck, err.Error()}, nil
	}
	return Condition{"True", ReasonPassed, "all checks passed"}, list
}

// probe GETs /apis/GROUP/VERSION from the aggregated server as the front
// proxy's own user (kube-aggregator's system:kube-aggregator) and returns
// the answer.
func (a *Aggregator) probe(ctx context.Context, s *apiregistrationv1.APIService) ([]byte, error) {
	target := serviceURL(s)
	target.Path = "/apis/" + s.Spec.Group + "/" + s.Spec.Version
	tr, err := a.transport(s)
	if err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %w", target, err)
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %w", target, err)
	}
	req.Header.Set("Accept", "application/json")
	setRemoteUser(req.Header, &User{Name: "system:kube-aggregator", Groups: []string{"system:masters"}})
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %s", target, errorText(err))
	}
	defer resp.Body.Close()
	list, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %w", target, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("failing or missing response from %s: bad status from %s: %d", target, target, resp.StatusCode)
	}
	return list, nil
}

// endpoints reports whether Service namespace/name has EndpointSlices and
// whether one has a ready address for the port named portName.
func (a *Aggregator) endpoints(ctx context.Context, namespace, name, portName string) (found, ready bool, err error) {
	items, _, err := a.opts.List(ctx, endpointSlicesGVR, namespace)
	if err != nil {
		return false, false, fmt.Errorf("list endpointslices of %s: %w", namespace, err)
	}
	for _, b := range items {
		var es discoveryv1.EndpointSlice
		if err := json.Unmarshal(b, &es); err != nil {
			return false, false, fmt.Errorf("decode endpointslice: %w", err)
		}
		if es.Labels["kubernetes.io/service-name"] != name {
			continue
		}
		found = true
		hasPort := false
		for _, p := range es.Ports {
			if (p.Name == nil && portName == "") || (p.Name != nil && *p.Name == portName) {
				hasPort = true
			}
		}
		if !hasPort {
			continue
		}
		for _, ep := range es.Endpoints {
			if (ep.Conditions.Ready == nil || *ep.Conditions.Ready) && len(ep.Addresses) > 0 {
				return true, true, nil
			}
		}
	}
	return found, false, nil
}
