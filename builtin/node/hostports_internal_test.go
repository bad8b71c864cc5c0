package node

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

func TestPortClaims(t *testing.T) {
	t.Parallel()
	pod := func(ports ...corev1.ContainerPort) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.Containers = []corev1.Container{{Name: "c", Ports: ports}}
		return p
	}
	tcp := func(port int32) corev1.ContainerPort { return corev1.ContainerPort{ContainerPort: 80, HostPort: port} }
	for _, c := range []struct {
		name       string
		held, next *corev1.Pod
		want       bool
	}{
		{"same port, every address", pod(tcp(21017)), pod(tcp(21017)), false},
		{"another port", pod(tcp(21017)), pod(tcp(21018)), true},
		{"no host port", pod(tcp(21017)), pod(corev1.ContainerPort{ContainerPort: 21017}), true},
		{"another protocol", pod(tcp(53)), pod(corev1.ContainerPort{HostPort: 53, Protocol: corev1.ProtocolUDP}), true},
		{"TCP is the default", pod(corev1.ContainerPort{HostPort: 53, Protocol: corev1.ProtocolTCP}), pod(tcp(53)), false},
		{"two addresses", pod(corev1.ContainerPort{HostPort: 80, HostIP: "10.0.0.1"}), pod(corev1.ContainerPort{HostPort: 80, HostIP: "10.0.0.2"}), true},
		{"an address and every address", pod(corev1.ContainerPort{HostPort: 80, HostIP: "10.0.0.1"}), pod(tcp(80)), false},
	} {
		var h portClaims
		if !h.claim("a", podHostPorts(c.held)) {
			t.Fatalf("%s: the first pod was refused", c.name)
		}
		if got := h.claim("b", podHostPorts(c.next)); got != c.want {
			t.Errorf("%s: claim = %v, want %v", c.name, got, c.want)
		}
	}

	var h portClaims
	a, b := podHostPorts(pod(tcp(21017))), podHostPorts(pod(tcp(21017)))
	if !h.claim("a", a) || h.claim("b", b) {
		t.Fatal("the second pod of a port was admitted")
	}
	if !h.claim("a", a) {
		t.Error("a pod's own claim conflicts with itself")
	}
	h.release("a")
	if !h.claim("b", b) {
		t.Error("the port stayed held after its pod was released")
	}
}
