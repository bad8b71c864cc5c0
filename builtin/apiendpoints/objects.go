package apiendpoints

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var key = client.ObjectKey{Namespace: Namespace, Name: Name}

// write makes the Service, then the Endpoints and the EndpointSlice, what
// they should be for the live addresses.
func (r *Reconciler) write(ctx context.Context, live []netip.Addr) error {
	if err := r.writeService(ctx); err != nil {
		return err
	}
	return r.writeEndpoints(ctx, live)
}

// writeEndpoints writes the Endpoints and the EndpointSlice.
func (r *Reconciler) writeEndpoints(ctx context.Context, live []netip.Addr) error {
	return errors.Join(r.writeEndpointsObject(ctx, live), r.writeEndpointSlice(ctx, live))
}

// servicePorts is the Service's wanted port list.
func (r *Reconciler) servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: PortName, Protocol: corev1.ProtocolTCP, Port: r.opts.ServicePort,
		TargetPort: api.FromInt(int(r.opts.Port))}}
}

// writeService creates the Service, or puts its ports and type back when they
// drifted. Its cluster IP, set at creation, is immutable.
func (r *Reconciler) writeService(ctx context.Context) error {
	svc := &corev1.Service{}
	err := r.opts.Client.Get(ctx, key, svc)
	if apierrors.IsNotFound(err) {
		svc = &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: Namespace, Name: Name,
				Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: r.opts.ServiceIP.String(),
				SessionAffinity: corev1.ServiceAffinityNone, Ports: r.servicePorts()},
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
	if svc.Spec.Type == corev1.ServiceTypeClusterIP && portsMatch(svc.Spec.Ports, r.servicePorts()) {
		return nil
	}
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.Ports = r.servicePorts()
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

// writeEndpointsObject writes the Endpoints: one subset with the live addresses.
func (r *Reconciler) writeEndpointsObject(ctx context.Context, live []netip.Addr) error {
	addrs := make([]corev1.EndpointAddress, len(live))
	for i, a := range live {
		addrs[i] = corev1.EndpointAddress{IP: a.String()}
	}
	subsets := []corev1.EndpointSubset{{Addresses: addrs,
		Ports: []corev1.EndpointPort{{Name: PortName, Port: r.opts.Port, Protocol: corev1.ProtocolTCP}}}}
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

// writeEndpointSlice writes the EndpointSlice: one ready endpoint per live address.
func (r *Reconciler) writeEndpointSlice(ctx context.Context, live []netip.Addr) error {
	addrType := discoveryv1.AddressTypeIPv6
	for _, a := range live {
		if a.Unmap().Is4() {
			addrType = discoveryv1.AddressTypeIPv4
		}
	}
	endpoints := make([]discoveryv1.Endpoint, len(live))
	for i, a := range live {
		endpoints[i] = discoveryv1.Endpoint{Addresses: []string{a.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: api.Ptr(true)}}
	}
	ports := []discoveryv1.EndpointPort{{Name: api.Ptr(PortName), Protocol: api.Ptr(corev1.ProtocolTCP), Port: api.Ptr(r.opts.Port)}}
	s := &discoveryv1.EndpointSlice{}
	err := r.opts.Client.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		s = &discoveryv1.EndpointSlice{ObjectMeta: api.ObjectMeta{Namespace: Namespace, Name: Name,
			Labels: map[string]string{discoveryv1.LabelServiceName: Name}},
			AddressType: addrType, Endpoints: endpoints, Ports: ports}
		if err := r.opts.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create endpointslice %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get endpointslice %s: %w", key, err)
	}
	if s.Labels[discoveryv1.LabelServiceName] == Name && s.AddressType == addrType &&
		gocmp.Equal(s.Endpoints, endpoints, cmpopts.EquateEmpty()) && gocmp.Equal(s.Ports, ports, cmpopts.EquateEmpty()) {
		return nil
	}
	if s.AddressType != addrType {
		// The address type is immutable: replace the slice (at the next pass).
		err := r.opts.Client.Delete(ctx, s, client.Preconditions{UID: api.Ptr(s.UID), ResourceVersion: api.Ptr(s.ResourceVersion)})
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete endpointslice %s for its address type: %w", key, err)
		}
		return nil
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[discoveryv1.LabelServiceName] = Name
	s.Endpoints, s.Ports = endpoints, ports
	if err := r.opts.Client.Update(ctx, s); err != nil {
		return fmt.Errorf("update endpointslice %s: %w", key, err)
	}
	return nil
}
