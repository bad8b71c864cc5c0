package servicenet

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// testStrategy returns the wrapped core/v1 Service strategy over a fresh store.
func testStrategy(t *testing.T) (*serviceStrategy, *Allocator, *memStore) {
	t.Helper()
	return testStrategyWithPorts(t, "30000-30099")
}

// testStrategyWithPorts is testStrategy with the node port range ports.
func testStrategyWithPorts(t *testing.T, ports string) (*serviceStrategy, *Allocator, *memStore) {
	t.Helper()
	a, ms := newTestAllocator(t, "127.96.0.0/24", ports)
	var res *registry.Resource
	for _, r := range corev1.Resources() {
		if r.Resource == "services" {
			res = r
		}
	}
	WrapServiceResource(res, a)
	return res.Strategy.(*serviceStrategy), a, ms
}

type svcOpt func(*corev1.Service)

func svcType(t corev1.ServiceType) svcOpt { return func(s *corev1.Service) { s.Spec.Type = t } }
func clusterIP(ip string) svcOpt          { return func(s *corev1.Service) { s.Spec.ClusterIP = ip } }
func nodePort(i int, np int32) svcOpt {
	return func(s *corev1.Service) { s.Spec.Ports[i].NodePort = np }
}

// serviceMap returns the canonical (defaulted) map of a Service named name
// with ports http 80/TCP and dns 53/TCP + dns-udp 53/UDP.
func serviceMap(t *testing.T, name string, opts ...svcOpt) map[string]any {
	t.Helper()
	s := &corev1.Service{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, UID: "uid-" + name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 80}, {Name: "dns", Port: 53}, {Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP},
		}},
	}
	for _, o := range opts {
		o(s)
	}
	corev1.DefaultService(s)
	m, err := registry.ToMap(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// create runs the create hooks the API server runs; it commits on success.
func create(t *testing.T, s *serviceStrategy, obj map[string]any) (*corev1.Service, error) {
	t.Helper()
	ctx := t.Context()
	s.PrepareForCreate(obj)
	adm, err := s.AdmitCreate(ctx, obj)
	if err != nil {
		return nil, err
	}
	if adm.Commit != nil {
		adm.Commit(ctx)
	}
	svc, err := registry.FromMap[corev1.Service](obj)
	if err != nil {
		t.Fatal(err)
	}
	return svc, nil
}

func nodePortsOf(s *corev1.Service) []int32 {
	var out []int32
	for _, p := range s.Spec.Ports {
		out = append(out, p.NodePort)
	}
	return out
}

func TestAdmitCreate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      []svcOpt
		wantErr   string
		check     func(t *testing.T, s *corev1.Service)
		wantIPs   int // reservations left behind
		wantPorts int
	}{
		{
			name: "cluster IP allocated",
			check: func(t *testing.T, s *corev1.Service) {
				ip := netip.MustParseAddr(s.Spec.ClusterIP)
				if !netip.MustParsePrefix("127.96.0.0/24").Contains(ip) || !slices.Equal(s.Spec.ClusterIPs, []string{s.Spec.ClusterIP}) {
					t.Errorf("clusterIP %q clusterIPs %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
				}
				if !slices.Equal(nodePortsOf(s), []int32{0, 0, 0}) {
					t.Errorf("node ports %v on a ClusterIP service", nodePortsOf(s))
				}
			},
			wantIPs: 1,
		},
		{
			name: "requested IP honoured",
			opts: []svcOpt{clusterIP("127.96.0.10")},
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "127.96.0.10" || !slices.Equal(s.Spec.ClusterIPs, []string{"127.96.0.10"}) {
					t.Errorf("clusterIP %q clusterIPs %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
				}
			},
			wantIPs: 1,
		},
		{
			name:    "requested IP outside the range",
			opts:    []svcOpt{clusterIP("10.96.0.10")},
			wantErr: `Service "svc" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is not in the valid range. The range of valid IPs is 127.96.0.0/24`,
		},
		{
			name:    "malformed IP",
			opts:    []svcOpt{clusterIP("127.96.0.300")},
			wantErr: `Service "svc" is invalid: spec.clusterIPs[0]: Invalid value: "127.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
		},
		{
			name: "headless",
			opts: []svcOpt{clusterIP("None")},
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "None" || !slices.Equal(s.Spec.ClusterIPs, []string{"None"}) {
					t.Errorf("clusterIP %q clusterIPs %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
				}
			},
		},
		{
			name: "ExternalName",
			opts: []svcOpt{svcType(corev1.ServiceTypeExternalName), func(s *corev1.Service) { s.Spec.ExternalName = "example.com" }},
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "" || len(s.Spec.ClusterIPs) != 0 {
					t.Errorf("clusterIP %q clusterIPs %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
				}
			},
		},
		{
			name:    "ExternalName with a cluster IP",
			opts:    []svcOpt{svcType(corev1.ServiceTypeExternalName), clusterIP("127.96.0.10")},
			wantErr: `Service "svc" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services`,
		},
		{
			name: "NodePort: one node port per port number",
			opts: []svcOpt{svcType(corev1.ServiceTypeNodePort)},
			check: func(t *testing.T, s *corev1.Service) {
				np := nodePortsOf(s)
				if np[0] < 30000 || np[0] > 30099 || np[1] < 30000 || np[1] == np[0] || np[2] != np[1] {
					t.Errorf("node ports %v", np)
				}
			},
			wantIPs: 1, wantPorts: 2,
		},
		{
			name: "NodePort: requested port honoured and shared by its port number",
			opts: []svcOpt{svcType(corev1.ServiceTypeNodePort), nodePort(2, 30050)},
			check: func(t *testing.T, s *corev1.Service) {
				if np := nodePortsOf(s); np[1] != 30050 || np[2] != 30050 || np[0] == 0 {
					t.Errorf("node ports %v", np)
				}
			},
			wantIPs: 1, wantPorts: 2,
		},
		{
			name:    "NodePort: requested port outside the range",
			opts:    []svcOpt{svcType(corev1.ServiceTypeNodePort), nodePort(0, 30180)},
			wantErr: `Service "svc" is invalid: spec.ports[0].nodePort: Invalid value: 30180: provided port is not in the valid range. The range of valid ports is 30000-30099`,
		},
		{
			name:    "NodePort: one node port twice for one protocol",
			opts:    []svcOpt{svcType(corev1.ServiceTypeNodePort), nodePort(0, 30010), nodePort(1, 30010)},
			wantErr: `Service "svc" is invalid: spec.ports[1].nodePort: Duplicate value: 30010`,
		},
		{
			name: "LoadBalancer without node port allocation",
			opts: []svcOpt{svcType(corev1.ServiceTypeLoadBalancer), func(s *corev1.Service) { s.Spec.AllocateLoadBalancerNodePorts = api.Ptr(false) }},
			check: func(t *testing.T, s *corev1.Service) {
				if np := nodePortsOf(s); !slices.Equal(np, []int32{0, 0, 0}) {
					t.Errorf("node ports %v", np)
				}
			},
			wantIPs: 1,
		},
		{
			name:    "dual-stack refused",
			opts:    []svcOpt{func(s *corev1.Service) { s.Spec.IPFamilyPolicy = api.Ptr(corev1.IPFamilyPolicyRequireDualStack) }},
			wantErr: `Service "svc" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, ms := testStrategy(t)
			svc, err := create(t, s, serviceMap(t, "svc", tt.opts...))
			if got := errString(err); got != tt.wantErr {
				t.Fatalf("error:\n got %q\nwant %q", got, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, svc)
			}
			if got := len(ms.keys(IPReservationPrefix)); got != tt.wantIPs {
				t.Errorf("%d IP reservations, want %d", got, tt.wantIPs)
			}
			if got := len(ms.keys(NodePortReservationPrefix)); got != tt.wantPorts {
				t.Errorf("%d node port reservations, want %d", got, tt.wantPorts)
			}
		})
	}
}

// TestAdmitCreateRequestedNodePortsFirst checks that a node port drawn at random
// for one service port is never the one a later service port requests: with
// two node ports in the range and the second one requested, the first service
// port must get the other, every time (before requests were reserved first,
// half of the draws shared the requested port between different port numbers).
func TestAdmitCreateRequestedNodePortsFirst(t *testing.T) {
	t.Parallel()
	for range 20 {
		s, _, ms := testStrategyWithPorts(t, "30000-30001")
		svc, err := create(t, s, serviceMap(t, "svc", svcType(corev1.ServiceTypeNodePort), nodePort(2, 30000)))
		if err != nil {
			t.Fatal(err)
		}
		if np := nodePortsOf(svc); !slices.Equal(np, []int32{30001, 30000, 30000}) {
			t.Fatalf("node ports %v, want [30001 30000 30000]", np)
		}
		if got := len(ms.keys(NodePortReservationPrefix)); got != 2 {
			t.Fatalf("%d node port reservations, want 2", got)
		}
	}
}

func TestAdmitCreateConflictsWithOtherServices(t *testing.T) {
	t.Parallel()
	s, _, ms := testStrategy(t)
	if _, err := create(t, s, serviceMap(t, "a", svcType(corev1.ServiceTypeNodePort), clusterIP("127.96.0.10"), nodePort(0, 30080))); err != nil {
		t.Fatal(err)
	}
	before := append(ms.keys(IPReservationPrefix), ms.keys(NodePortReservationPrefix)...)
	_, err := create(t, s, serviceMap(t, "b", clusterIP("127.96.0.10")))
	if want := `Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"127.96.0.10"}: failed to allocate IP 127.96.0.10: provided IP is already allocated`; errString(err) != want {
		t.Errorf("IP taken:\n got %v\nwant %s", err, want)
	}
	_, err = create(t, s, serviceMap(t, "c", svcType(corev1.ServiceTypeNodePort), nodePort(0, 30080)))
	if want := `Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`; errString(err) != want {
		t.Errorf("port taken:\n got %v\nwant %s", err, want)
	}
	// The failed creates undid what they had reserved (c's cluster IP).
	after := append(ms.keys(IPReservationPrefix), ms.keys(NodePortReservationPrefix)...)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("reservations changed (-before +after):\n%s", diff)
	}
}

func TestUpdateAndDelete(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, _, ms := testStrategy(t)
	created, err := create(t, s, serviceMap(t, "svc", svcType(corev1.ServiceTypeNodePort)))
	if err != nil {
		t.Fatal(err)
	}
	old, err := registry.ToMap(created)
	if err != nil {
		t.Fatal(err)
	}
	update := func(next map[string]any, commit bool) (*corev1.Service, error) {
		s.PrepareForUpdate(next, old)
		if errs := s.ValidateUpdate(ctx, next, old); len(errs) > 0 {
			return nil, errs.ToError()
		}
		adm, err := s.AdmitUpdate(ctx, next, old)
		if err != nil {
			return nil, err
		}
		if commit {
			adm.Commit(ctx)
			old = next
		} else {
			adm.Abort(ctx)
		}
		return registry.FromMap[corev1.Service](next)
	}

	// Re-submitting the manifest without the allocated values keeps them.
	got, err := update(serviceMap(t, "svc", svcType(corev1.ServiceTypeNodePort)), true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ClusterIP != created.Spec.ClusterIP || !slices.Equal(nodePortsOf(got), nodePortsOf(created)) {
		t.Fatalf("update lost allocated values: %v %v, had %v %v", got.Spec.ClusterIP, nodePortsOf(got), created.Spec.ClusterIP, nodePortsOf(created))
	}
	// Changing the cluster IP is refused. (The create allocated one at
	// random; ask for another.)
	otherIP := "127.96.0.99"
	if created.Spec.ClusterIP == otherIP {
		otherIP = "127.96.0.98"
	}
	if _, err := update(serviceMap(t, "svc", svcType(corev1.ServiceTypeNodePort), clusterIP(otherIP)), true); !strings.Contains(errString(err), "field is immutable") {
		t.Fatalf("changed clusterIP: %v", err)
	}
	// An aborted update that asked for another node port leaves no reservation
	// (another port than the one allocated at random on create).
	other := int32(30077)
	if slices.Contains(nodePortsOf(created), other) {
		other++
	}
	if _, err := update(serviceMap(t, "svc", svcType(corev1.ServiceTypeNodePort), nodePort(0, other)), false); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ms.keys(NodePortReservationPrefix), NodePortReservationPrefix+strconv.Itoa(int(other))) {
		t.Fatal("aborted update kept its reservation")
	}
	// NodePort → ClusterIP (as kubectl apply sends it: node ports still in the
	// object) drops and, once stored, releases the node ports.
	next := api.DeepCopyJSON(old)
	api.SetNestedField(next, "ClusterIP", "spec", "type")
	got, err = update(next, true)
	if err != nil {
		t.Fatal(err)
	}
	if np := nodePortsOf(got); !slices.Equal(np, []int32{0, 0, 0}) {
		t.Errorf("node ports after type change: %v", np)
	}
	if k := ms.keys(NodePortReservationPrefix); len(k) != 0 {
		t.Errorf("node ports still reserved: %v", k)
	}
	// Deleting releases the cluster IP.
	s.Deleted(ctx, old)
	if k := ms.keys(IPReservationPrefix); len(k) != 0 {
		t.Errorf("IPs still reserved after delete: %v", k)
	}
}

func TestRepair(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, ms := newTestAllocator(t, "127.96.0.0/24", "30000-30099")
	r := NewRepairer(a, 0)
	storeService := func(name, uid, ip string, np int32) {
		svc := corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name, UID: uid},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: ip, ClusterIPs: []string{ip},
				Ports: []corev1.ServicePort{{Port: 80, NodePort: np}}}}
		b, err := json.Marshal(svc)
		if err != nil {
			t.Fatal(err)
		}
		ms.put(ServicePrefix+"default/"+name, b)
	}
	reserve := func(key string, o Owner) {
		b, _ := json.Marshal(o)
		ms.put(key, b)
	}
	// in-use: a Service with its reservations.
	storeService("inuse", "u1", "127.96.0.1", 30001)
	reserve(IPReservationPrefix+"127.96.0.1", Owner{"default", "inuse", "u1"})
	reserve(NodePortReservationPrefix+"30001", Owner{"default", "inuse", "u1"})
	// missing: a Service whose reservations are gone.
	storeService("missing", "u2", "127.96.0.2", 30002)
	// leaked: reservations of a Service that no longer exists.
	reserve(IPReservationPrefix+"127.96.0.3", Owner{"default", "gone", "u3"})
	reserve(NodePortReservationPrefix+"30003", Owner{"default", "gone", "u3"})
	// conflict: a Service claiming an IP another Service holds, and one outside the range.
	storeService("clash", "u4", "127.96.0.1", 0)
	storeService("outside", "u5", "10.0.0.1", 0)

	res, err := r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := RepairResult{
		Reserved:  []string{IPReservationPrefix + "127.96.0.2", NodePortReservationPrefix + "30002"},
		Suspected: []string{IPReservationPrefix + "127.96.0.3", NodePortReservationPrefix + "30003"},
		Problems: []string{
			"service default/clash: cluster IP 127.96.0.1: provided IP is already allocated",
			"service default/outside: cluster IP 10.0.0.1: provided IP is not in the valid range. The range of valid IPs is 127.96.0.0/24",
		},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Fatalf("first pass (-want +got):\n%s", diff)
	}
	// A suspect whose reservation changed in between is judged afresh.
	ms.mu.Lock()
	delete(ms.kvs, NodePortReservationPrefix+"30003")
	ms.mu.Unlock()
	reserve(NodePortReservationPrefix+"30003", Owner{"default", "gone", "u3"})

	res, err = r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{IPReservationPrefix + "127.96.0.3"}, res.Released); diff != "" {
		t.Errorf("second pass released (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{NodePortReservationPrefix + "30003"}, res.Suspected); diff != "" {
		t.Errorf("second pass suspects (-want +got):\n%s", diff)
	}
	res, err = r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{NodePortReservationPrefix + "30003"}, res.Released); diff != "" {
		t.Errorf("third pass released (-want +got):\n%s", diff)
	}
	wantKeys := []string{IPReservationPrefix + "127.96.0.1", IPReservationPrefix + "127.96.0.2"}
	if diff := cmp.Diff(wantKeys, ms.keys(IPReservationPrefix)); diff != "" {
		t.Errorf("IP reservations (-want +got):\n%s", diff)
	}
	wantKeys = []string{NodePortReservationPrefix + "30001", NodePortReservationPrefix + "30002"}
	if diff := cmp.Diff(wantKeys, ms.keys(NodePortReservationPrefix)); diff != "" {
		t.Errorf("node port reservations (-want +got):\n%s", diff)
	}
}
