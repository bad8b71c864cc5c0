package node

import (
	"sync"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// Admission of host ports, as the kubelet's (its admit handler runs the
// scheduler's NodePorts filter): a pod whose host ports overlap those of a
// pod this node already admitted is rejected, phase Failed with this reason
// and message, so its controller replaces it (the StatefulSet spec "Should
// recreate evicted statefulset" counts on it).
const (
	reasonNodePorts  = "NodePorts"
	messageNodePorts = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
)

// hostPort is one host port a pod asks for: its address (0.0.0.0 for every
// address), protocol and number.
type hostPort struct {
	ip, protocol string
	port         int32
}

// overlaps reports whether two host ports cannot both be bound: same port
// and protocol, and the same address or one of them every address.
func (p hostPort) overlaps(q hostPort) bool {
	return p.port == q.port && p.protocol == q.protocol && (p.ip == q.ip || p.ip == anyIP || q.ip == anyIP)
}

const anyIP = "0.0.0.0"

// podHostPorts lists the host ports of pod's containers (hostPort > 0),
// with the defaults the scheduler assumes: every address, TCP.
func podHostPorts(pod *corev1.Pod) []hostPort {
	var ports []hostPort
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
			if hp.ip == "" {
				hp.ip = anyIP
			}
			if hp.protocol == "" {
				hp.protocol = string(corev1.ProtocolTCP)
			}
			ports = append(ports, hp)
		}
	}
	return ports
}

// portClaims are the host ports held by the node's admitted pods. The zero
// value is ready to use.
type portClaims struct {
	mu    sync.Mutex
	byPod map[string][]hostPort // by pod UID
}

// claim admits pod uid's ports unless one overlaps a port another admitted
// pod holds; a pod without host ports is always admitted.
func (h *portClaims) claim(uid string, ports []hostPort) bool {
	if len(ports) == 0 {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for other, held := range h.byPod {
		if other == uid {
			continue
		}
		for _, p := range ports {
			for _, q := range held {
				if p.overlaps(q) {
					return false
				}
			}
		}
	}
	if h.byPod == nil {
		h.byPod = map[string][]hostPort{}
	}
	h.byPod[uid] = ports
	return true
}

// release frees pod uid's ports.
func (h *portClaims) release(uid string) {
	h.mu.Lock()
	delete(h.byPod, uid)
	h.mu.Unlock()
}
