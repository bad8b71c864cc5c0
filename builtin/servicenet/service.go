package servicenet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// WrapServiceResource makes res (the core/v1 services resource) allocate
// cluster IPs and node ports with alloc: its Strategy is replaced by one that
// delegates to the original and adds registry.Preparer, registry.Admitter and
// registry.DeleteHook. Wrapping a resource wrapped before replaces the
// allocator instead of stacking a second one.
func WrapServiceResource(res *registry.Resource, alloc *Allocator) {
	inner := res.Strategy
	if w, ok := inner.(*serviceStrategy); ok {
		inner = w.Strategy
	}
	res.Strategy = &serviceStrategy{Strategy: inner, alloc: alloc}
}

// serviceStrategy is the Service strategy with allocation.
type serviceStrategy struct {
	registry.Strategy
	alloc *Allocator
}

var (
	_ registry.Preparer   = (*serviceStrategy)(nil)
	_ registry.Admitter   = (*serviceStrategy)(nil)
	_ registry.DeleteHook = (*serviceStrategy)(nil)
)

var serviceKind = api.GroupKind{Kind: "Service"}

// PrepareForCreate normalises clusterIP and clusterIPs.
func (s *serviceStrategy) PrepareForCreate(obj map[string]any) {
	if p, ok := s.Strategy.(registry.Preparer); ok {
		p.PrepareForCreate(obj)
	}
	svc, err := registry.FromMap[corev1.Service](obj)
	if err != nil {
		return // validation reports it
	}
	normalizeClusterIPs(svc)
	writeBack(obj, svc)
}

// PrepareForUpdate keeps allocated values the client left out and drops those
// that belong to the old type only, then normalises clusterIP and clusterIPs.
func (s *serviceStrategy) PrepareForUpdate(obj, old map[string]any) {
	if p, ok := s.Strategy.(registry.Preparer); ok {
		p.PrepareForUpdate(obj, old)
	}
	svc, err1 := registry.FromMap[corev1.Service](obj)
	prev, err2 := registry.FromMap[corev1.Service](old)
	if err1 != nil || err2 != nil {
		return
	}
	patchAllocatedValues(svc, prev)
	dropTypeDependentFields(svc, prev)
	normalizeClusterIPs(svc)
	writeBack(obj, svc)
}

// AdmitCreate reserves the Service's cluster IP and node ports.
func (s *serviceStrategy) AdmitCreate(ctx context.Context, obj map[string]any) (registry.Admission, error) {
	return s.admit(ctx, obj, nil)
}

// AdmitUpdate reserves what the update adds; what it gives up is released once
// it is stored.
func (s *serviceStrategy) AdmitUpdate(ctx context.Context, obj, old map[string]any) (registry.Admission, error) {
	prev, err := registry.FromMap[corev1.Service](old)
	if err != nil {
		return registry.Admission{}, apierrors.NewInternalError(fmt.Errorf("decode stored service: %w", err))
	}
	return s.admit(ctx, obj, prev)
}

// Deleted releases the Service's cluster IPs and node ports.
func (s *serviceStrategy) Deleted(ctx context.Context, obj map[string]any) {
	svc, err := registry.FromMap[corev1.Service](obj)
	if err != nil {
		s.alloc.log.Error(err, "Cannot decode deleted service; the repair loop releases its reservations")
		return
	}
	owner := ownerOf(svc)
	for _, ip := range serviceIPs(svc) {
		if err := s.alloc.ReleaseIP(ctx, ip, owner); err != nil {
			s.alloc.log.Error(err, "Cannot release cluster IP", "service", owner, "ip", ip)
		}
	}
	for _, np := range nodePorts(svc) {
		if err := s.alloc.ReleaseNodePort(ctx, np, owner); err != nil {
			s.alloc.log.Error(err, "Cannot release node port", "service", owner, "nodePort", np)
		}
	}
}

// txn collects what an admission reserved (undone on abort) and what it gives
// up (released on commit).
type txn struct {
	alloc    *Allocator
	owner    Owner
	reserved []reservation
	giveIPs  []netip.Addr
	givePort []int
}

func (t *txn) abort(ctx context.Context) {
	for _, r := range slices.Backward(t.reserved) {
		if err := r.undo(ctx); err != nil {
			t.alloc.log.Error(err, "Cannot undo reservation; the repair loop releases it", "service", t.owner)
		}
	}
	t.reserved = nil
}

func (t *txn) commit(ctx context.Context) {
	for _, ip := range t.giveIPs {
		if err := t.alloc.ReleaseIP(ctx, ip, t.owner); err != nil {
			t.alloc.log.Error(err, "Cannot release cluster IP", "service", t.owner, "ip", ip)
		}
	}
	for _, np := range t.givePort {
		if err := t.alloc.ReleaseNodePort(ctx, np, t.owner); err != nil {
			t.alloc.log.Error(err, "Cannot release node port", "service", t.owner, "nodePort", np)
		}
	}
}

// admit reserves the values of obj (a new Service when old is nil) and writes
// the allocated ones into obj.
func (s *serviceStrategy) admit(ctx context.Context, obj map[string]any, old *corev1.Service) (registry.Admission, error) {
	svc, err := registry.FromMap[corev1.Service](obj)
	if err != nil {
		return registry.Admission{}, apierrors.NewBadRequest(fmt.Sprintf("decode service: %v", err))
	}
	t := &txn{alloc: s.alloc, owner: ownerOf(svc)}
	if err := s.admitClusterIPs(ctx, t, svc, old); err != nil {
		t.abort(ctx)
		return registry.Admission{}, err
	}
	if err := s.admitNodePorts(ctx, t, svc, old); err != nil {
		t.abort(ctx)
		return registry.Admission{}, err
	}
	writeBack(obj, svc)
	return registry.Admission{Commit: t.commit, Abort: t.abort}, nil
}

func (s *serviceStrategy) admitClusterIPs(ctx context.Context, t *txn, svc, old *corev1.Service) error {
	sp := field.NewPath("spec")
	var held []netip.Addr
	if old != nil {
		held = serviceIPs(old)
	}
	var keep []netip.Addr
	defer func() {
		for _, ip := range held {
			if !slices.Contains(keep, ip) {
				t.giveIPs = append(t.giveIPs, ip)
			}
		}
	}()
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		if spec.ClusterIP != "" || len(spec.ClusterIPs) > 0 {
			return invalid(svc, field.Forbidden(sp.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		return nil
	}
	var errs field.ErrorList
	if p := spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(sp.Child("ipFamilyPolicy"), string(*p), "this cluster is not configured for dual-stack services"))
	}
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(sp.Child("ipFamilies").Index(i), string(f), "not configured on this cluster"))
		}
	}
	if len(spec.ClusterIPs) > 1 {
		errs = append(errs, field.Invalid(sp.Child("clusterIPs"), spec.ClusterIPs, "this cluster is not configured for dual-stack services"))
	}
	if len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] != spec.ClusterIP {
		errs = append(errs, field.Invalid(sp.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "first value must match `clusterIP`"))
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	switch spec.ClusterIP {
	case clusterIPNone:
		spec.ClusterIPs = []string{clusterIPNone}
		return nil
	case "":
		r, err := s.alloc.ipSet.next(ctx, t.owner)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
		}
		t.reserved = append(t.reserved, r)
		spec.ClusterIP, spec.ClusterIPs = r.name, []string{r.name}
		return nil
	}
	ip, err := netip.ParseAddr(spec.ClusterIP)
	if err != nil {
		return invalid(svc, field.Invalid(sp.Child("clusterIPs").Index(0), spec.ClusterIP, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
	}
	if !ip.Is4() {
		return invalid(svc, field.Invalid(sp.Child("clusterIPs").Index(0), spec.ClusterIPs, "IPv6 is not configured on this cluster"))
	}
	spec.ClusterIP, spec.ClusterIPs = ip.String(), []string{ip.String()}
	keep = append(keep, ip)
	if slices.Contains(held, ip) {
		return nil
	}
	r, err := s.alloc.reserveIP(ctx, ip, t.owner)
	if err != nil {
		if isAllocationError(err) {
			return invalid(svc, field.Invalid(sp.Child("clusterIPs"), spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %s: %v", ip, err)))
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate IP %s: %w", ip, err))
	}
	t.reserved = append(t.reserved, r)
	return nil
}

func (s *serviceStrategy) admitNodePorts(ctx context.Context, t *txn, svc, old *corev1.Service) error {
	var held []int
	if old != nil {
		held = nodePorts(old)
	}
	used := map[int]bool{}
	defer func() {
		for _, np := range held {
			if !used[np] {
				t.givePort = append(t.givePort, np)
			}
		}
	}()
	if !needsNodePorts(svc) {
		return nil
	}
	ports := svc.Spec.Ports
	// Kubernetes refuses one node port twice for one protocol.
	seen := map[corev1.ServicePort]bool{}
	for i, p := range ports {
		if p.NodePort == 0 {
			continue
		}
		k := corev1.ServicePort{Protocol: p.Protocol, NodePort: p.NodePort}
		if seen[k] {
			return invalid(svc, field.Duplicate(field.NewPath("spec", "ports").Index(i).Child("nodePort"), int64(p.NodePort)))
		}
		seen[k] = true
	}
	// Ports with the same number (e.g. 53/TCP and 53/UDP) share a node port, as
	// in Kubernetes. Requested node ports are reserved first and free ones drawn
	// after, so that a port drawn at random for one service port can never be
	// one that a later service port asks for (Kubernetes goes in order, and then
	// refuses the request as already allocated).
	byPort := map[int32]int32{}
	for _, draw := range []bool{false, true} {
		for i := range ports {
			p := &ports[i]
			if p.NodePort == 0 && !allocatesNodePorts(svc) {
				continue // LoadBalancer without node ports: only requests are honoured
			}
			if p.NodePort == 0 {
				if np, ok := byPort[p.Port]; ok {
					p.NodePort = np
				} else {
					p.NodePort = requestedNodePort(p.Port, ports[i+1:])
				}
			}
			if (p.NodePort == 0) != draw {
				continue
			}
			if err := s.assignNodePort(ctx, t, svc, i, held, used); err != nil {
				return err
			}
			if _, ok := byPort[p.Port]; !ok {
				byPort[p.Port] = p.NodePort
			}
		}
	}
	return nil
}

// assignNodePort reserves the node port that port i of svc asks for, or draws a
// free one when it asks for none, unless the Service holds it already (held: its
// ports before this update; used: the ports assigned so far in this one).
func (s *serviceStrategy) assignNodePort(ctx context.Context, t *txn, svc *corev1.Service, i int, held []int, used map[int]bool) error {
	p := &svc.Spec.Ports[i]
	if p.NodePort == 0 {
		r, err := s.alloc.npSet.next(ctx, t.owner)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
		}
		t.reserved = append(t.reserved, r)
		np, _ := parsePort(r.name)
		p.NodePort = int32(np)
	} else if np := int(p.NodePort); !used[np] && !slices.Contains(held, np) {
		r, err := s.alloc.reserveNodePort(ctx, np, t.owner)
		if err != nil {
			if isAllocationError(err) {
				path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
				return invalid(svc, field.Invalid(path, int64(p.NodePort), err.Error()))
			}
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate node port %d: %w", np, err))
		}
		t.reserved = append(t.reserved, r)
	}
	used[int(p.NodePort)] = true
	return nil
}

// requestedNodePort returns the first node port requested for port number n.
func requestedNodePort(n int32, ports []corev1.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == n && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

func isAllocationError(err error) bool {
	return errors.Is(err, ErrNotInRange) || errors.Is(err, ErrIPAllocated) || errors.Is(err, ErrPortAllocated)
}

func invalid(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList(errs))
}

func ownerOf(svc *corev1.Service) Owner {
	return Owner{Namespace: svc.Namespace, Name: svc.Name, UID: svc.UID}
}

// needsClusterIP: every type but ExternalName has cluster IPs (or None).
func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

// needsNodePorts: NodePort and LoadBalancer Services may have node ports.
func needsNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

// allocatesNodePorts: node ports are allocated for NodePort Services and for
// LoadBalancers unless allocateLoadBalancerNodePorts is false.
func allocatesNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// serviceIPs returns the cluster IPs a Service holds (none when headless or
// ExternalName).
func serviceIPs(svc *corev1.Service) []netip.Addr {
	if !needsClusterIP(svc) {
		return nil
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	var out []netip.Addr
	for _, s := range ips {
		if ip, err := netip.ParseAddr(s); err == nil && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	return out
}

// nodePorts returns the distinct node ports a Service holds.
func nodePorts(svc *corev1.Service) []int {
	if !needsNodePorts(svc) {
		return nil
	}
	var out []int
	for _, p := range svc.Spec.Ports {
		if np := int(p.NodePort); np != 0 && !slices.Contains(out, np) {
			out = append(out, np)
		}
	}
	return out
}

// normalizeClusterIPs fills clusterIP from clusterIPs and the other way round.
func normalizeClusterIPs(svc *corev1.Service) {
	sp := &svc.Spec
	switch {
	case sp.ClusterIP == "" && len(sp.ClusterIPs) > 0:
		sp.ClusterIP = sp.ClusterIPs[0]
	case sp.ClusterIP != "" && len(sp.ClusterIPs) == 0:
		sp.ClusterIPs = []string{sp.ClusterIP}
	}
}

// patchAllocatedValues copies allocated values a client omitted from the old
// Service, so re-submitting the original manifest works (Kubernetes' rule).
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
		}
	}
	if needsNodePorts(old) && needsNodePorts(svc) {
		inNew := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				inNew[p.NodePort] = true
			}
		}
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if np := byName[p.Name]; p.NodePort == 0 && np != 0 && !inNew[np] {
				p.NodePort = np
				inNew[np] = true
			}
		}
	}
}

// dropTypeDependentFields clears values of the old type that a type change
// makes invalid, when the client left them as they were (so `kubectl apply`
// can change the type).
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) &&
		svc.Spec.ClusterIP == old.Spec.ClusterIP && slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
	}
	if needsNodePorts(old) && !needsNodePorts(svc) {
		oldPorts := map[int32]bool{}
		for _, p := range old.Spec.Ports {
			oldPorts[p.NodePort] = true
		}
		for i := range svc.Spec.Ports {
			if p := &svc.Spec.Ports[i]; oldPorts[p.NodePort] {
				p.NodePort = 0
			}
		}
	}
}

// writeBack stores the allocation fields of svc in obj.
func writeBack(obj map[string]any, svc *corev1.Service) {
	if svc.Spec.ClusterIP != "" {
		api.SetNestedField(obj, svc.Spec.ClusterIP, "spec", "clusterIP")
	} else {
		api.RemoveNestedField(obj, "spec", "clusterIP")
	}
	if len(svc.Spec.ClusterIPs) > 0 {
		ips := make([]any, len(svc.Spec.ClusterIPs))
		for i, ip := range svc.Spec.ClusterIPs {
			ips[i] = ip
		}
		api.SetNestedField(obj, ips, "spec", "clusterIPs")
	} else {
		api.RemoveNestedField(obj, "spec", "clusterIPs")
	}
	ports := api.NestedSlice(obj, "spec", "ports")
	for i, p := range ports {
		m, ok := p.(map[string]any)
		if !ok || i >= len(svc.Spec.Ports) {
			continue
		}
		if np := svc.Spec.Ports[i].NodePort; np != 0 {
			m["nodePort"] = int64(np)
		} else {
			delete(m, "nodePort")
		}
	}
}

// clusterIPNone marks a headless Service.
const clusterIPNone = "None"

func parsePort(s string) (int, error) { return strconv.Atoi(s) }
