package proxy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/api"
)

func svc(name string, typ corev1.ServiceType, ip string, ports ...corev1.ServicePort) *corev1.Service {
	s := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{Type: typ, ClusterIP: ip, Ports: ports}}
	if ip != "" {
		s.Spec.ClusterIPs = []string{ip}
	}
	return s
}

type ep struct {
	ip                          string
	ready, serving, terminating *bool
}

func slice(svcName, name string, ports map[string]int32, eps ...ep) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svcName}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for n, p := range ports {
		proto := corev1.ProtocolTCP // the port named "udp" is UDP
		if n == "udp" {
			proto = corev1.ProtocolUDP
		}
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: api.Ptr(n), Port: api.Ptr(p), Protocol: api.Ptr(proto)})
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: e.ready, Serving: e.serving, Terminating: e.terminating}})
	}
	return s
}

var (
	yes = api.Ptr(true)
	no  = api.Ptr(false)
)

func TestDesired(t *testing.T) {
	t.Parallel()
	http := corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}
	tests := []struct {
		name   string
		svcs   []*corev1.Service
		slices []*discoveryv1.EndpointSlice
		want   map[string]frontend
	}{
		{
			name: "ready endpoints across slices, sorted and deduplicated; not ready skipped",
			svcs: []*corev1.Service{svc("web", corev1.ServiceTypeClusterIP, "127.96.0.5", http)},
			slices: []*discoveryv1.EndpointSlice{
				slice("web", "web-a", map[string]int32{"http": 8080}, ep{ip: "127.10.0.2", ready: yes}, ep{ip: "127.10.0.3", ready: no}),
				slice("web", "web-b", map[string]int32{"http": 8080}, ep{ip: "127.10.0.1"}, ep{ip: "127.10.0.2", ready: yes}),
				slice("other", "other-a", map[string]int32{"http": 9090}, ep{ip: "127.10.0.9"}),
			},
			want: map[string]frontend{"127.96.0.5:80": {Service: "ns/web:http", Backends: []string{"127.10.0.1:8080", "127.10.0.2:8080"}}},
		},
		{
			name: "serving terminating endpoints only when none is ready",
			svcs: []*corev1.Service{svc("web", corev1.ServiceTypeClusterIP, "127.96.0.5", http)},
			slices: []*discoveryv1.EndpointSlice{
				slice("web", "web-a", map[string]int32{"http": 8080},
					ep{ip: "127.10.0.2", ready: no, serving: yes, terminating: yes}, ep{ip: "127.10.0.3", ready: no, serving: no, terminating: yes}),
			},
			want: map[string]frontend{"127.96.0.5:80": {Service: "ns/web:http", Backends: []string{"127.10.0.2:8080"}}},
		},
		{
			name: "ports matched by name; UDP on its own address; SCTP skipped; no endpoints still listens",
			svcs: []*corev1.Service{svc("dns", corev1.ServiceTypeClusterIP, "127.96.0.6",
				corev1.ServicePort{Name: "tcp", Port: 53, Protocol: corev1.ProtocolTCP},
				corev1.ServicePort{Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP},
				corev1.ServicePort{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP},
				corev1.ServicePort{Name: "sctp", Port: 7, Protocol: corev1.ProtocolSCTP})},
			slices: []*discoveryv1.EndpointSlice{slice("dns", "dns-a", map[string]int32{"tcp": 5353, "udp": 5353}, ep{ip: "127.10.0.4"})},
			want: map[string]frontend{
				"127.96.0.6:53":     {Service: "ns/dns:tcp", Backends: []string{"127.10.0.4:5353"}},
				"udp/127.96.0.6:53": {Service: "ns/dns:udp", Backends: []string{"127.10.0.4:5353"}},
				"127.96.0.6:9153":   {Service: "ns/dns:metrics"},
			},
		},
		{
			name: "node ports on every node port address",
			svcs: []*corev1.Service{svc("np", corev1.ServiceTypeNodePort, "127.96.0.7",
				corev1.ServicePort{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP})},
			slices: []*discoveryv1.EndpointSlice{slice("np", "np-a", map[string]int32{"": 8080}, ep{ip: "127.10.0.5"})},
			want: map[string]frontend{
				"127.96.0.7:80":    {Service: "ns/np:80", Backends: []string{"127.10.0.5:8080"}},
				"127.0.0.1:30080":  {Service: "ns/np:80", Backends: []string{"127.10.0.5:8080"}},
				"127.0.0.42:30080": {Service: "ns/np:80", Backends: []string{"127.10.0.5:8080"}},
			},
		},
		{
			name: "headless, ExternalName and unallocated services get nothing",
			svcs: []*corev1.Service{
				svc("headless", corev1.ServiceTypeClusterIP, "None", http),
				svc("ext", corev1.ServiceTypeExternalName, "", http),
				svc("pending", corev1.ServiceTypeClusterIP, "", http),
			},
			want: map[string]frontend{},
		},
		{
			name: "services of another proxy (the cluster DNS) are left alone",
			svcs: []*corev1.Service{func() *corev1.Service {
				s := svc("kube-dns", corev1.ServiceTypeClusterIP, "127.96.0.10", http)
				s.Labels = map[string]string{labelServiceProxyName: "converge-dns"}
				return s
			}()},
			want: map[string]frontend{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := desired(tt.svcs, tt.slices, []string{"127.0.0.1", "127.0.0.42"})
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(frontend{})); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostedIPs(t *testing.T) {
	for _, tc := range []struct {
		name string
		svcs []*corev1.Service
		want []string
	}{
		{name: "none", svcs: nil, want: nil},
		{name: "loopback cluster IPs need no interface", svcs: []*corev1.Service{svc("a", corev1.ServiceTypeClusterIP, "127.96.0.10")}, want: nil},
		{name: "routable cluster IPs, sorted and deduplicated", svcs: []*corev1.Service{
			svc("b", corev1.ServiceTypeNodePort, "10.43.0.20"),
			svc("a", corev1.ServiceTypeClusterIP, "10.43.0.3"),
			svc("c", corev1.ServiceTypeClusterIP, "10.43.0.3"),
		}, want: []string{"10.43.0.3", "10.43.0.20"}},
		{name: "headless and ExternalName skipped", svcs: []*corev1.Service{
			svc("h", corev1.ServiceTypeClusterIP, "None"),
			svc("x", corev1.ServiceTypeExternalName, "10.43.0.9"),
		}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, a := range hostedIPs(tc.svcs) {
				got = append(got, a.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hostedIPs (-want +got):\n%s", diff)
			}
		})
	}
}
