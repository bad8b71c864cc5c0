package apiendpoints

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var key = client.ObjectKey{Namespace: Namespace, Name: Name}

// endpoints is what the objects say: the API servers' port and addresses.
type endpoints struct {
	port  int32
	addrs []netip.Addr // sorted, distinct
}

// choose picks the endpoints from the live API servers. Like Kubernetes, the
// Service has one target port for all of them: the port most of them serve
// on (the lowest on a tie); the addresses are those of the servers on that
// port. Every server computes the same from the same leases, so none undoes
// another's writes, and every address listed answers on the port listed.
func choose(live []netip.AddrPort) endpoints {
	count := map[uint16]int{}
	for _, ap := range live {
		count[ap.Port()]++
	}
	var e endpoints
	best := 0
	for port, n := range count {
		if n > best || n == best && int32(port) < e.port {
			e.port, best = int32(port), n
		}
	}
	for _, ap := range live {
		if int32(ap.Port()) == e.port {
			e.addrs = append(e.addrs, ap.Addr())
		}
	}
	slices.SortFunc(e.addrs, netip.Addr.Compare)
	e.addrs = slices.Compact(e.addrs)
	return e
}

// write makes the Service, the Endpoints and the EndpointSlice what they
// should be for e. Each is written even when another fails (a Service whose
// IP another Service holds still leaves the endpoints true).
func (r *Reconciler) write(ctx context.Context, e endpoints) error {
	return errors.Join(r.writeService(ctx, e.port), r.writeEndpointsObject(ctx, e), r.writeEndpointSlice(ctx, e))
}

// servicePorts is the Service's wanted port list.
func (r *Reconciler) servicePorts(targetPort int32) []corev1.ServicePort {
	return []corev1.ServicePort{{Name: PortName, Protocol: corev1.ProtocolTCP, Port: r.opts.ServicePort,
		TargetPort: api.FromInt(int(targetPort))}}
}

// writeService creates the Service, or puts its ports and type back when they
// drifted. Its cluster IP, set at creation, is immutable.
func (r *Reconciler) writeService(ctx context.Context, targetPort int32) error {
	svc := &corev1.Service{}
	err := r.opts.Client.Get(ctx, key, svc)
	if apierrors.IsNotFound(err) {
		svc = &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: Namespace, Name: Name,
				Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: r.opts.ServiceIP.String(),
				SessionAffinity: corev1.ServiceAffinityNone, Ports: r.servicePorts(targetPort)},
		}
		err = r.opts.Client.Create(ctx, svc)
		if apierrors.IsAlreadyExists(err) {
			return nil // another API server was first; the next pass checks it
		}
		if err != nil {
			return fmt.Errorf("create service %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get service %s: %w", key, err)
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP && portsMatch(svc.Spec.Ports, r.servicePorts(targetPort)) {
		return nil
	}
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.Ports = r.servicePorts(targetPort)
	if err := r.opts.Client.Update(ctx, svc); err != nil {
		return fmt.Errorf("update service %s: %w", key, err)
	}
	return nil
}

// portsMatch compares the fields the Service's ports are reconciled on.
func portsMatch(have, want []corev1.ServicePort) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range have {
		h, w := have[i], want[i]
		if h.Name != w.Name || h.Port != w.Port || h.Protocol != w.Protocol || h.TargetPort != w.TargetPort || h.NodePort != 0 {
			return false
		}
	}
	return true
}

// writeEndpointsObject writes the Endpoints: one subset with the addresses.
func (r *Reconciler) writeEndpointsObject(ctx context.Context, e endpoints) error {
	addrs := make([]corev1.EndpointAddress, len(e.addrs))
	for i, a := range e.addrs {
		addrs[i] = corev1.EndpointAddress{IP: a.String()}
	}
	subsets := []corev1.EndpointSubset{{Addresses: addrs,
		Ports: []corev1.EndpointPort{{Name: PortName, Port: e.port, Protocol: corev1.ProtocolTCP}}}}
	ep := &corev1.Endpoints{}
	err := r.opts.Client.Get(ctx, key, ep)
	if apierrors.IsNotFound(err) {
		ep = &corev1.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: Namespace, Name: Name,
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}}, Subsets: subsets}
		if err := r.opts.Client.Create(ctx, ep); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpoints %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get endpoints %s: %w", key, err)
	}
	if ep.Labels[discoveryv1.LabelSkipMirror] == "true" && gocmp.Equal(ep.Subsets, subsets, cmpopts.EquateEmpty()) {
		return nil
	}
	if ep.Labels == nil {
		ep.Labels = map[string]string{}
	}
	ep.Labels[discoveryv1.LabelSkipMirror] = "true"
	ep.Subsets = subsets
	if err := r.opts.Client.Update(ctx, ep); err != nil {
		return fmt.Errorf("update endpoints %s: %w", key, err)
	}
	return nil
}

// writeEndpointSlice writes the EndpointSlice: one ready endpoint per address.
func (r *Reconciler) writeEndpointSlice(ctx context.Context, e endpoints) error {
	addrType := discoveryv1.AddressTypeIPv6
	for _, a := range e.addrs {
		if a.Unmap().Is4() {
			addrType = discoveryv1.AddressTypeIPv4
		}
	}
	eps := make([]discoveryv1.Endpoint, len(e.addrs))
	for i, a := range e.addrs {
		eps[i] = discoveryv1.Endpoint{Addresses: []string{a.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: api.Ptr(true)}}
	}
	ports := []discoveryv1.EndpointPort{{Name: api.Ptr(PortName), Protocol: api.Ptr(corev1.ProtocolTCP), Port: api.Ptr(e.port)}}
	create := func() error {
		s := &discoveryv1.EndpointSlice{ObjectMeta: api.ObjectMeta{Namespace: Namespace, Name: Name,
			Labels: map[string]string{discoveryv1.LabelServiceName: Name}},
			AddressType: addrType, Endpoints: eps, Ports: ports}
		if err := r.opts.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpointslice %s: %w", key, err)
		}
		return nil
	}
	s := &discoveryv1.EndpointSlice{}
	err := r.opts.Client.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		return create()
	}
	if err != nil {
		return fmt.Errorf("get endpointslice %s: %w", key, err)
	}
	if s.Labels[discoveryv1.LabelServiceName] == Name && s.AddressType == addrType &&
		gocmp.Equal(s.Endpoints, eps, cmpopts.EquateEmpty()) && gocmp.Equal(s.Ports, ports, cmpopts.EquateEmpty()) {
		return nil
	}
	if s.AddressType != addrType {
		// The address type is immutable: replace the slice.
		err := r.opts.Client.Delete(ctx, s, client.Preconditions{UID: api.Ptr(s.UID), ResourceVersion: api.Ptr(s.ResourceVersion)})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete endpointslice %s for its address type: %w", key, err)
		}
		return create()
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[discoveryv1.LabelServiceName] = Name
	s.Endpoints, s.Ports = eps, ports
	if err := r.opts.Client.Update(ctx, s); err != nil {
		return fmt.Errorf("update endpointslice %s: %w", key, err)
	}
	return nil
}
