package endpointslicemirroring

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

const (
	// Name is the controller's name in builtin/controllers.
	Name = "endpointslicemirroring"
	// ControllerName is the managed-by label value of mirrored slices.
	ControllerName = "endpointslicemirroring-controller.k8s.io"
	// MaxEndpointsPerSubset is how many addresses of one subset are mirrored.
	MaxEndpointsPerSubset = 1000

	annotationLeaderElection    = "control-plane.alpha.kubernetes.io/leader"
	annotationLastChangeTrigger = "endpoints.kubernetes.io/last-change-trigger-time"
	annotationLastApplied       = "kubectl.kubernetes.io/last-applied-configuration"
)

// Setup adds the controller to mgr.
func Setup(mgr *manager.Manager) error {
	r := &reconciler{reader: mgr.Reader(), client: mgr.Client()}
	sliceToEndpoints := func(_ context.Context, obj api.Object) []reconcile.Request {
		l := obj.GetLabels()
		if l[discoveryv1.LabelManagedBy] != ControllerName || l[discoveryv1.LabelServiceName] == "" {
			return nil
		}
		return []reconcile.Request{{ObjectKey: client.ObjectKey{Namespace: obj.GetNamespace(), Name: l[discoveryv1.LabelServiceName]}}}
	}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Endpoints]()).
		// A Service has its Endpoints' key.
		Watches(builder.Kind[*corev1.Service](), handler.EnqueueRequestForObject()).
		Watches(builder.Kind[*discoveryv1.EndpointSlice](), handler.EnqueueRequestsFromMapFunc(sliceToEndpoints)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("endpointslicemirroring: %w", err)
	}
	return nil
}

type reconciler struct {
	reader interface {
		Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
		List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
	}
	client interface {
		Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
		Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
		Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	}
}

// Reconcile makes the mirrored slices of the Endpoints req names match it.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := r.reader.List(ctx, list, client.InNamespace(req.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: req.Name, discoveryv1.LabelManagedBy: ControllerName}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list mirrored slices of %s: %w", req.ObjectKey, err)
	}
	eps, err := r.mirrored(ctx, req.ObjectKey)
	if err != nil {
		return reconcile.Result{}, err
	}
	var want []discoveryv1.EndpointSlice
	if eps != nil {
		want = desired(eps)
	}
	existing := list.Items
	for i := range want {
		j := slices.IndexFunc(existing, func(s discoveryv1.EndpointSlice) bool {
			return s.AddressType == want[i].AddressType && reflect.DeepEqual(s.Ports, want[i].Ports)
		})
		if j < 0 {
			if err := r.client.Create(ctx, &want[i]); err != nil {
				return reconcile.Result{}, fmt.Errorf("create mirrored slice of %s: %w", req.ObjectKey, err)
			}
			continue
		}
		cur := existing[j]
		existing = slices.Delete(existing, j, j+1)
		if reflect.DeepEqual(cur.Endpoints, want[i].Endpoints) && maps.Equal(cur.Labels, want[i].Labels) &&
			maps.Equal(cur.Annotations, want[i].Annotations) && reflect.DeepEqual(cur.OwnerReferences, want[i].OwnerReferences) {
			continue
		}
		cur.Endpoints, cur.Labels, cur.Annotations, cur.OwnerReferences = want[i].Endpoints, want[i].Labels, want[i].Annotations, want[i].OwnerReferences
		if err := r.client.Update(ctx, &cur); err != nil {
			return reconcile.Result{}, fmt.Errorf("update mirrored slice %s/%s: %w", cur.Namespace, cur.Name, err)
		}
	}
	for i := range existing {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, &existing[i])); err != nil {
			return reconcile.Result{}, fmt.Errorf("delete mirrored slice %s/%s: %w", existing[i].Namespace, existing[i].Name, err)
		}
	}
	return reconcile.Result{}, nil
}

// mirrored returns the Endpoints at key when it is to be mirrored, else nil.
func (r *reconciler) mirrored(ctx context.Context, key client.ObjectKey) (*corev1.Endpoints, error) {
	svc := &corev1.Service{}
	if err := r.reader.Get(ctx, key, svc); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get service %s: %w", key, err)
	}
	if svc.Spec.Selector != nil || svc.DeletionTimestamp != nil {
		return nil, nil
	}
	eps := &corev1.Endpoints{}
	if err := r.reader.Get(ctx, key, eps); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get endpoints %s: %w", key, err)
	}
	if eps.Labels[discoveryv1.LabelSkipMirror] == "true" || eps.DeletionTimestamp != nil {
		return nil, nil
	}
	if _, ok := eps.Annotations[annotationLeaderElection]; ok {
		return nil, nil
	}
	return eps, nil
}

// desired returns the slices mirroring eps, in a stable order.
func desired(eps *corev1.Endpoints) []discoveryv1.EndpointSlice {
	var out []discoveryv1.EndpointSlice
	find := func(t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
		for i := range out {
			if out[i].AddressType == t && reflect.DeepEqual(out[i].Ports, ports) {
				return &out[i]
			}
		}
		out = append(out, newSlice(eps, t, ports))
		return &out[len(out)-1]
	}
	for _, ss := range eps.Subsets {
		ports := slicePorts(ss.Ports)
		n := 0
		add := func(addrs []corev1.EndpointAddress, ready bool) {
			for _, a := range addrs {
				if n == MaxEndpointsPerSubset {
					return
				}
				ep, t, ok := endpointOf(a, ready)
				if !ok {
					continue
				}
				n++
				s := find(t, ports)
				s.Endpoints = append(s.Endpoints, ep)
			}
		}
		add(ss.Addresses, true)
		add(ss.NotReadyAddresses, false)
	}
	return out
}

func newSlice(eps *corev1.Endpoints, t discoveryv1.AddressType, ports []discoveryv1.EndpointPort) discoveryv1.EndpointSlice {
	labels := maps.Clone(eps.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[discoveryv1.LabelServiceName] = eps.Name
	labels[discoveryv1.LabelManagedBy] = ControllerName
	annotations := map[string]string{}
	for k, v := range eps.Annotations {
		if k != annotationLastChangeTrigger && k != annotationLastApplied {
			annotations[k] = v
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	prefix := eps.Name + "-"
	if len(prefix) > 253-5 { // leave room for the generated suffix
		prefix = eps.Name
	}
	return discoveryv1.EndpointSlice{
		ObjectMeta: api.ObjectMeta{Namespace: eps.Namespace, GenerateName: prefix, Labels: labels, Annotations: annotations,
			OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: eps.Name, UID: eps.UID,
				Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true)}}},
		AddressType: t, Ports: ports, Endpoints: []discoveryv1.Endpoint{},
	}
}

func slicePorts(ports []corev1.EndpointPort) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	for _, p := range ports {
		ep := discoveryv1.EndpointPort{Name: api.Ptr(p.Name), Port: api.Ptr(p.Port), AppProtocol: p.AppProtocol}
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		ep.Protocol = &proto
		out = append(out, ep)
	}
	return out
}

// endpointOf converts one address; ok is false for an address that is no IP.
func endpointOf(a corev1.EndpointAddress, ready bool) (discoveryv1.Endpoint, discoveryv1.AddressType, bool) {
	ip, err := netip.ParseAddr(strings.TrimSpace(a.IP))
	if err != nil {
		return discoveryv1.Endpoint{}, "", false
	}
	t := discoveryv1.AddressTypeIPv4
	if ip.Is6() && !ip.Is4In6() {
		t = discoveryv1.AddressTypeIPv6
	}
	ep := discoveryv1.Endpoint{Addresses: []string{ip.Unmap().String()}, Conditions: discoveryv1.EndpointConditions{Ready: api.Ptr(ready)},
		TargetRef: a.TargetRef, NodeName: a.NodeName}
	if a.Hostname != "" {
		ep.Hostname = api.Ptr(a.Hostname)
	}
	return ep, t, true
}
