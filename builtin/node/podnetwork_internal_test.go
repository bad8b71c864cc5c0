package node

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/podnet"
)

func TestPodCIDRFor(t *testing.T) {
	for _, tc := range []struct {
		network, nodeCIDR, want string
	}{
		{PodNetworkCNI, "", "10.42.0.0/24"},
		{PodNetworkCNI, "10.42.5.0/24", "10.42.5.0/24"},
		{PodNetworkCNI, "127.10.0.0/16", "10.42.0.0/24"}, // recorded by a process-runtime agent
		{PodNetworkLoopback, "127.10.0.0/16", "127.10.0.0/16"},
	} {
		a := &Agent{opts: Options{PodNetwork: tc.network, PodCIDR: "10.42.0.0/24"}, log: logr.Discard()}
		if got := a.podCIDRFor(tc.nodeCIDR); got != tc.want {
			t.Errorf("%s with Node podCIDR %q: got %s, want %s", tc.network, tc.nodeCIDR, got, tc.want)
		}
	}
}

func TestHostPorts(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Ports: []corev1.ContainerPort{
			{ContainerPort: 8080, HostPort: 80},
			{ContainerPort: 9090}, // no hostPort: not mapped
		}},
		{Name: "b", Ports: []corev1.ContainerPort{{ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP, HostIP: "127.0.0.1"}}},
	}}}
	want := []podnet.PortMapping{
		{HostPort: 80, ContainerPort: 8080, Protocol: "tcp"},
		{HostPort: 5353, ContainerPort: 53, Protocol: "udp", HostIP: "127.0.0.1"},
	}
	if diff := cmp.Diff(want, hostPorts(pod)); diff != "" {
		t.Errorf("hostPorts (-want +got):\n%s", diff)
	}
}

// TestSandboxMountsHosts: a container of a pod with its own network namespace
// gets the pod's hosts file at /etc/hosts, unless it mounts something there
// itself (upstream's KubeletManagedEtcHosts spec).
func TestSandboxMountsHosts(t *testing.T) {
	w := &podWorker{dir: t.TempDir(), netns: "/run/netns/x"}
	if err := os.WriteFile(w.hostsPath(), []byte("127.0.0.1\tlocalhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	managed := cri.ContainerSpec{}
	w.sandboxMounts(&managed)
	if want := []cri.Mount{{HostPath: w.hostsPath(), ContainerPath: "/etc/hosts", ReadOnly: true}}; !cmp.Equal(managed.Mounts, want) || managed.NetNSPath != w.netns {
		t.Errorf("managed: mounts %+v netns %q", managed.Mounts, managed.NetNSPath)
	}
	own := cri.ContainerSpec{Mounts: []cri.Mount{{HostPath: "/etc/hosts", ContainerPath: "/etc/hosts/"}}}
	w.sandboxMounts(&own)
	if len(own.Mounts) != 1 || own.Mounts[0].HostPath != "/etc/hosts" {
		t.Errorf("own /etc/hosts mount: mounts %+v, want only the container's", own.Mounts)
	}
}
