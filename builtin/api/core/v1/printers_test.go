package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var printNow = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) api.Time { return api.NewTime(printNow.Add(-d)) }

func printRow(t *testing.T, p *registry.Printer, obj any) []any {
	t.Helper()
	m, err := registry.ToMap(obj)
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.Row(m, printNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(row) != len(p.Columns) {
		t.Fatalf("%d cells for %d columns", len(row), len(p.Columns))
	}
	return row
}

func TestPodPrinter(t *testing.T) {
	meta := api.ObjectMeta{Name: "web", CreationTimestamp: ago(5 * time.Minute)}
	one := PodSpec{Containers: []Container{{Name: "c"}}}
	tests := []struct {
		name string
		pod  Pod
		want []any
	}{
		{"pending", Pod{ObjectMeta: meta, Spec: one, Status: PodStatus{Phase: PodPending}},
			[]any{"web", "0/1", "Pending", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"creating", Pod{ObjectMeta: meta, Spec: PodSpec{NodeName: "n1", Containers: one.Containers}, Status: PodStatus{Phase: PodPending,
			ContainerStatuses: []ContainerStatus{{Name: "c", State: ContainerState{Waiting: &ContainerStateWaiting{Reason: "ContainerCreating"}}}}}},
			[]any{"web", "0/1", "ContainerCreating", "0", "5m", "<none>", "n1", "<none>", "<none>"}},
		{"running", Pod{ObjectMeta: meta, Spec: one, Status: PodStatus{Phase: PodRunning, PodIPs: []PodIP{{IP: "10.0.0.1"}},
			ContainerStatuses: []ContainerStatus{{Name: "c", Ready: true, State: ContainerState{Running: &ContainerStateRunning{}}}}}},
			[]any{"web", "1/1", "Running", "0", "5m", "10.0.0.1", "<none>", "<none>", "<none>"}},
		{"crashloop", Pod{ObjectMeta: meta, Spec: one, Status: PodStatus{Phase: PodRunning,
			ContainerStatuses: []ContainerStatus{{Name: "c", RestartCount: 3,
				State:                ContainerState{Waiting: &ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: ContainerState{Terminated: &ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(2 * time.Minute)}}}}}},
			[]any{"web", "0/1", "CrashLoopBackOff", "3 (2m ago)", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"completed", Pod{ObjectMeta: meta, Spec: one, Status: PodStatus{Phase: PodSucceeded,
			ContainerStatuses: []ContainerStatus{{Name: "c", State: ContainerState{Terminated: &ContainerStateTerminated{Reason: "Completed"}}}}}},
			[]any{"web", "0/1", "Completed", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"init", Pod{ObjectMeta: meta, Spec: PodSpec{InitContainers: []Container{{Name: "i1"}, {Name: "i2"}}, Containers: one.Containers}, Status: PodStatus{Phase: PodPending,
			InitContainerStatuses: []ContainerStatus{{Name: "i1", State: ContainerState{Terminated: &ContainerStateTerminated{ExitCode: 0}}}, {Name: "i2", State: ContainerState{Running: &ContainerStateRunning{}}}}}},
			[]any{"web", "0/1", "Init:1/2", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"terminating", Pod{ObjectMeta: api.ObjectMeta{Name: "web", CreationTimestamp: ago(5 * time.Minute), DeletionTimestamp: api.NewTimePtr(printNow)}, Spec: one,
			Status: PodStatus{Phase: PodRunning, ContainerStatuses: []ContainerStatus{{Name: "c", Ready: true, State: ContainerState{Running: &ContainerStateRunning{}}}}}},
			[]any{"web", "1/1", "Terminating", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"readiness gates", Pod{ObjectMeta: meta, Spec: PodSpec{Containers: one.Containers, ReadinessGates: []PodReadinessGate{{ConditionType: "x"}}},
			Status: PodStatus{Phase: PodRunning, Conditions: []PodCondition{{Type: "x", Status: ConditionTrue}}}},
			[]any{"web", "0/1", "Running", "0", "5m", "<none>", "<none>", "<none>", "1/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, printRow(t, PodPrinter(), &tt.pod)); d != "" {
				t.Errorf("diff (-want +got):\n%s", d)
			}
		})
	}
}

func TestServicePrinter(t *testing.T) {
	meta := api.ObjectMeta{Name: "svc", CreationTimestamp: ago(3 * time.Hour)}
	tests := []struct {
		name string
		svc  Service
		want []any
	}{
		{"cluster ip", Service{ObjectMeta: meta, Spec: ServiceSpec{Type: ServiceTypeClusterIP, ClusterIPs: []string{"10.96.0.10"},
			Ports: []ServicePort{{Port: 80, Protocol: ProtocolTCP}, {Port: 53, Protocol: ProtocolUDP}}, Selector: map[string]string{"app": "web", "tier": "fe"}}},
			[]any{"svc", "ClusterIP", "10.96.0.10", "<none>", "80/TCP,53/UDP", "3h", "app=web,tier=fe"}},
		{"node port", Service{ObjectMeta: meta, Spec: ServiceSpec{Type: ServiceTypeNodePort, ClusterIPs: []string{"10.96.0.11"},
			Ports: []ServicePort{{Port: 80, NodePort: 30080, Protocol: ProtocolTCP}}}},
			[]any{"svc", "NodePort", "10.96.0.11", "<none>", "80:30080/TCP", "3h", "<none>"}},
		{"load balancer pending", Service{ObjectMeta: meta, Spec: ServiceSpec{Type: ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.0.12"},
			Ports: []ServicePort{{Port: 443, NodePort: 30443, Protocol: ProtocolTCP}}}},
			[]any{"svc", "LoadBalancer", "10.96.0.12", "<pending>", "443:30443/TCP", "3h", "<none>"}},
		{"external name", Service{ObjectMeta: meta, Spec: ServiceSpec{Type: ServiceTypeExternalName, ExternalName: "example.com"}},
			[]any{"svc", "ExternalName", "<none>", "example.com", "<none>", "3h", "<none>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, printRow(t, ServicePrinter(), &tt.svc)); d != "" {
				t.Errorf("diff (-want +got):\n%s", d)
			}
		})
	}
}

func TestOtherPrinters(t *testing.T) {
	meta := api.ObjectMeta{Name: "x", CreationTimestamp: ago(2 * 24 * time.Hour)}
	tests := []struct {
		name string
		p    *registry.Printer
		obj  any
		want []any
	}{
		{"node", NodePrinter(), &Node{ObjectMeta: api.ObjectMeta{Name: "n1", CreationTimestamp: meta.CreationTimestamp, Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
			Spec:   NodeSpec{Unschedulable: true},
			Status: NodeStatus{Conditions: []NodeCondition{{Type: NodeReady, Status: ConditionTrue}}, NodeInfo: NodeSystemInfo{KubeletVersion: "v1.32.0"}, Addresses: []NodeAddress{{Type: NodeInternalIP, Address: "172.18.0.2"}}}},
			[]any{"n1", "Ready,SchedulingDisabled", "control-plane", "2d", "v1.32.0", "172.18.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
		{"namespace", NamespacePrinter(), &Namespace{ObjectMeta: meta, Status: NamespaceStatus{Phase: NamespaceActive}}, []any{"x", "Active", "2d"}},
		{"configmap", ConfigMapPrinter(), &ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": "b"}, BinaryData: map[string][]byte{"c": nil}}, []any{"x", int64(2), "2d"}},
		{"secret", SecretPrinter(), &Secret{ObjectMeta: meta, Type: SecretTypeOpaque, Data: map[string][]byte{"a": nil}}, []any{"x", "Opaque", int64(1), "2d"}},
		{"serviceaccount", ServiceAccountPrinter(), &ServiceAccount{ObjectMeta: meta}, []any{"x", int64(0), "2d"}},
		{"endpoints", EndpointsPrinter(), &Endpoints{ObjectMeta: meta, Subsets: []EndpointSubset{{Addresses: []EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}, Ports: []EndpointPort{{Port: 80}, {Port: 443}}}}},
			[]any{"x", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...", "2d"}},
		{"event", EventPrinter(), &Event{ObjectMeta: meta, InvolvedObject: ObjectReference{Kind: "Pod", Name: "web"}, Reason: "Pulled", Type: "Normal", Message: "done ",
			Source: EventSource{Component: "kubelet", Host: "n1"}, FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(time.Minute), Count: 2},
			[]any{"60s", "Normal", "Pulled", "pod/web", "", "kubelet, n1", "done", "10m", int64(2), "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, printRow(t, tt.p, tt.obj)); d != "" {
				t.Errorf("diff (-want +got):\n%s", d)
			}
		})
	}
}
