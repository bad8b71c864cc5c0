package endpointslice

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
)

// slicePlan is what it takes to turn the existing slices into the desired ones.
type slicePlan struct {
	create, update, delete []*discoveryv1.EndpointSlice
}

// empty reports whether the plan writes nothing.
func (p slicePlan) empty() bool { return len(p.create)+len(p.update)+len(p.delete) == 0 }

// sliceMeta is the metadata every managed slice of a Service carries.
type sliceMeta struct {
	labels map[string]string
	owner  api.OwnerReference
}

// desiredMeta returns the labels and controller reference of svc's slices:
// the Service's labels plus service-name, managed-by and, for headless
// services, service.kubernetes.io/headless (as Kubernetes does).
func desiredMeta(svc *corev1.Service) sliceMeta {
	lbls := maps.Clone(svc.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[discoveryv1.LabelServiceName] = svc.Name
	lbls[discoveryv1.LabelManagedBy] = ControllerName
	if svc.Spec.ClusterIP == clusterIPNone {
		lbls[LabelHeadless] = ""
	} else {
		delete(lbls, LabelHeadless)
	}
	return sliceMeta{labels: lbls, owner: api.OwnerReference{
		APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
		Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true),
	}}
}

// planSlices compares existing managed slices with the desired groups. It
// keeps endpoints in the slice they are in, fills free room in kept slices
// before creating new ones, and deletes slices of vanished groups and slices
// left empty (except one placeholder for a Service without endpoints).
// existing is not modified: changed slices are copies.
func planSlices(svc *corev1.Service, groups map[string]*endpointGroup, existing []*discoveryv1.EndpointSlice, maxPerSlice int) (slicePlan, error) {
	var plan slicePlan
	meta := desiredMeta(svc)
	byGroup := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range existing {
		k := groupKey(s.AddressType, s.Ports)
		if _, ok := groups[k]; !ok {
			plan.delete = append(plan.delete, s)
			continue
		}
		byGroup[k] = append(byGroup[k], s)
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		want := make(map[string]discoveryv1.Endpoint, len(g.endpoints))
		for _, ep := range g.endpoints {
			want[endpointKey(ep)] = ep
		}
		placed := map[string]bool{}
		type kept struct {
			orig *discoveryv1.EndpointSlice
			eps  []discoveryv1.Endpoint
		}
		var keep []*kept
		olds := byGroup[k]
		slices.SortFunc(olds, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
		for _, s := range olds {
			var eps []discoveryv1.Endpoint
			for _, ep := range s.Endpoints {
				ek := endpointKey(ep)
				if d, ok := want[ek]; ok && !placed[ek] && len(eps) < maxPerSlice {
					eps = append(eps, d)
					placed[ek] = true
				}
			}
			keep = append(keep, &kept{orig: s, eps: eps})
		}
		var rest []discoveryv1.Endpoint
		for _, ep := range g.endpoints {
			if !placed[endpointKey(ep)] {
				rest = append(rest, ep)
			}
		}
		for _, kp := range keep {
			if room := maxPerSlice - len(kp.eps); room > 0 && len(rest) > 0 {
				n := min(room, len(rest))
				kp.eps = append(kp.eps, rest[:n]...)
				rest = rest[n:]
			}
		}
		placeholder := len(g.endpoints) == 0
		for i, kp := range keep {
			if len(kp.eps) == 0 && !(placeholder && i == 0) {
				plan.delete = append(plan.delete, kp.orig)
				continue
			}
			if sliceUpToDate(kp.orig, meta, g, kp.eps) {
				continue
			}
			s, err := copySlice(kp.orig)
			if err != nil {
				return slicePlan{}, err
			}
			fill(s, meta, g, kp.eps)
			plan.update = append(plan.update, s)
		}
		if placeholder && len(keep) == 0 {
			rest = nil
			plan.create = append(plan.create, newSlice(svc, meta, g, nil))
		}
		for len(rest) > 0 {
			n := min(maxPerSlice, len(rest))
			plan.create = append(plan.create, newSlice(svc, meta, g, rest[:n]))
			rest = rest[n:]
		}
	}
	return reuseDeleted(plan)
}

// reuseDeleted turns a create into an update of a slice of the same address
// type the plan deletes, as Kubernetes' reconciler does: readers never see
// the old slice beside its replacement (a Service's placeholder, no ports,
// beside the slice of its first endpoints), and one write replaces two.
// Address types are immutable, so only slices of the same type are reused.
func reuseDeleted(plan slicePlan) (slicePlan, error) {
	var creates []*discoveryv1.EndpointSlice
	for _, c := range plan.create {
		i := slices.IndexFunc(plan.delete, func(d *discoveryv1.EndpointSlice) bool { return d.AddressType == c.AddressType })
		if i < 0 {
			creates = append(creates, c)
			continue
		}
		s, err := copySlice(plan.delete[i])
		if err != nil {
			return slicePlan{}, err
		}
		s.Labels, s.OwnerReferences, s.Ports, s.Endpoints = c.Labels, c.OwnerReferences, c.Ports, c.Endpoints
		plan.update = append(plan.update, s)
		plan.delete = slices.Delete(plan.delete, i, i+1)
	}
	plan.create = creates
	return plan, nil
}

func newSlice(svc *corev1.Service, meta sliceMeta, g *endpointGroup, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: api.ObjectMeta{GenerateName: svc.Name + "-", Namespace: svc.Namespace}}
	fill(s, meta, g, eps)
	return s
}

// fill sets the desired content of s.
func fill(s *discoveryv1.EndpointSlice, meta sliceMeta, g *endpointGroup, eps []discoveryv1.Endpoint) {
	s.Labels = maps.Clone(meta.labels)
	s.OwnerReferences = []api.OwnerReference{meta.owner}
	s.AddressType = g.addressType
	s.Ports = slices.Clone(g.ports)
	if s.Ports == nil {
		s.Ports = []discoveryv1.EndpointPort{}
	}
	s.Endpoints = slices.Clone(eps)
	if s.Endpoints == nil {
		s.Endpoints = []discoveryv1.Endpoint{}
	}
}

// sliceUpToDate reports whether s already has the desired content.
func sliceUpToDate(s *discoveryv1.EndpointSlice, meta sliceMeta, g *endpointGroup, eps []discoveryv1.Endpoint) bool {
	equateEmpty := cmpopts.EquateEmpty()
	return maps.Equal(s.Labels, meta.labels) &&
		gocmp.Equal(s.OwnerReferences, []api.OwnerReference{meta.owner}, equateEmpty) &&
		s.AddressType == g.addressType &&
		gocmp.Equal(sortedPorts(s.Ports), g.ports, equateEmpty) &&
		gocmp.Equal(s.Endpoints, eps, equateEmpty)
}

// copySlice deep-copies s (the framework's types have no DeepCopy).
func copySlice(s *discoveryv1.EndpointSlice) (*discoveryv1.EndpointSlice, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("copy endpointslice %s/%s: %w", s.Namespace, s.Name, err)
	}
	out := &discoveryv1.EndpointSlice{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("copy endpointslice %s/%s: %w", s.Namespace, s.Name, err)
	}
	return out, nil
}
