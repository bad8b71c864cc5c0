package node

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

func TestNeedsPodIP(t *testing.T) {
	fromIP := func(path string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}}
	}
	for _, tc := range []struct {
		name string
		c    corev1.Container
		want bool
	}{
		{"plain", corev1.Container{Command: []string{"sleep", "$(HOSTNAME)"}, Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}, false},
		{"other downward field", corev1.Container{Env: fromIP("metadata.name")}, false},
		{"status.podIP", corev1.Container{Env: fromIP("status.podIP")}, true},
		{"status.podIPs", corev1.Container{Env: fromIP("status.podIPs")}, true},
		{"env refers to POD_IP", corev1.Container{Env: []corev1.EnvVar{{Name: "ADDR", Value: "$(POD_IP):80"}}}, true},
		{"command refers to POD_IP", corev1.Container{Command: []string{"serve", "--listen=$(POD_IP):80"}}, true},
		{"args refer to POD_IP", corev1.Container{Args: []string{"$(POD_IP)"}}, true},
		{"subPathExpr", corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v", SubPathExpr: "$(HOSTNAME)"}}}, true},
	} {
		if got := needsPodIP(tc.c); got != tc.want {
			t.Errorf("%s: needsPodIP = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFinishSpec: a spec made while the pod's network was set up gets the
// pod IP (in POD_IP only when the agent added it), the namespace and the
// hosts file once the sandbox is ready; a start that ends first fails.
func TestFinishSpec(t *testing.T) {
	w := &podWorker{dir: t.TempDir(), netns: "/run/netns/early", sandboxParts: 1, sandboxReady: make(chan struct{})}
	spec := cri.ContainerSpec{Env: []string{"A=b", "POD_IP=", "HOSTNAME=p"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.finishSpec(true)(ctx, &spec); err == nil {
		t.Fatal("finish with the sandbox not ready and the start cancelled: no error")
	}
	if err := os.WriteFile(w.hostsPath(), []byte("10.1.2.3\tp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.podIP, w.netns = "10.1.2.3", "/run/netns/final"
	close(w.sandboxReady)
	if err := w.finishSpec(true)(context.Background(), &spec); err != nil {
		t.Fatal(err)
	}
	want := cri.ContainerSpec{Env: []string{"A=b", "POD_IP=10.1.2.3", "HOSTNAME=p"}, PodIP: "10.1.2.3", NetNSPath: "/run/netns/final",
		Mounts: []cri.Mount{{HostPath: w.hostsPath(), ContainerPath: "/etc/hosts", ReadOnly: true}}}
	if diff := cmp.Diff(want, spec, cmpopts.IgnoreFields(cri.ContainerSpec{}, "Finish")); diff != "" {
		t.Errorf("finished spec (-want +got):\n%s", diff)
	}
	own := cri.ContainerSpec{Env: []string{"POD_IP=mine"}}
	if err := w.finishSpec(false)(context.Background(), &own); err != nil {
		t.Fatal(err)
	}
	if own.Env[0] != "POD_IP=mine" || own.PodIP != "10.1.2.3" {
		t.Errorf("the pod's own POD_IP: env %v, PodIP %q", own.Env, own.PodIP)
	}
}

// TestHostsFile: the managed /etc/hosts carries the pod's host name, after its
// fully qualified name when the pod has a subdomain (upstream's DNS specs look
// both up with getent), and the host aliases, as the kubelet writes them.
func TestHostsFile(t *testing.T) {
	const head = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	long := "a-pod-name-that-is-longer-than-sixty-three-bytes-which-is-the-max-hostname"
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		pod  string
		want string
	}{
		{"pod name", corev1.PodSpec{}, "web-1", "10.1.2.3\tweb-1\n"},
		{"hostname", corev1.PodSpec{Hostname: "dns-querier-1"}, "dns-test-x", "10.1.2.3\tdns-querier-1\n"},
		{"hostname and subdomain", corev1.PodSpec{Hostname: "dns-querier-1", Subdomain: "dns-test-service"}, "dns-test-x",
			"10.1.2.3\tdns-querier-1.dns-test-service.ns1.svc.cluster.local\tdns-querier-1\n"},
		{"subdomain without hostname", corev1.PodSpec{Subdomain: "sub"}, "p",
			"10.1.2.3\tp.sub.ns1.svc.cluster.local\tp\n"},
		{"long pod name", corev1.PodSpec{}, long, "10.1.2.3\t" + strings.TrimRight(long[:63], "-.") + "\n"},
		{"host aliases", corev1.PodSpec{HostAliases: []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"foo", "bar"}}}}, "p",
			"10.1.2.3\tp\n\n# Entries added by HostAliases.\n1.2.3.4\tfoo\tbar\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.spec}
			pod.Name, pod.Namespace = tc.pod, "ns1"
			if diff := cmp.Diff(head+tc.want, string(hostsFile(pod, "10.1.2.3", "cluster.local"))); diff != "" {
				t.Errorf("hosts file (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContainerHostname: containers see the pod's spec.hostname (else its
// name), its fully qualified name with setHostnameAsFQDN; a hostNetwork pod
// keeps its name.
func TestContainerHostname(t *testing.T) {
	yes := true
	w := &podWorker{a: &Agent{opts: Options{ClusterDomain: "cluster.local"}}}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"pod name", corev1.PodSpec{}, "p"},
		{"hostname", corev1.PodSpec{Hostname: "h"}, "h"},
		{"hostname and subdomain", corev1.PodSpec{Hostname: "h", Subdomain: "s"}, "h"},
		{"FQDN", corev1.PodSpec{Hostname: "h", Subdomain: "s", SetHostnameAsFQDN: &yes}, "h.s.ns1.svc.cluster.local"},
		{"FQDN without subdomain", corev1.PodSpec{Hostname: "h", SetHostnameAsFQDN: &yes}, "h"},
		{"host network", corev1.PodSpec{Hostname: "h", HostNetwork: true}, "p"},
	} {
		pod := &corev1.Pod{Spec: tc.spec}
		pod.Name, pod.Namespace = "p", "ns1"
		if got := w.hostname(pod); got != tc.want {
			t.Errorf("%s: hostname = %q, want %q", tc.name, got, tc.want)
		}
	}
}
