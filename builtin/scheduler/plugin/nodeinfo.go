package plugin

import (
	"fmt"
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// ImageStateSummary describes a container image present on a node.
type ImageStateSummary struct {
	// Size of the image in bytes.
	Size int64
	// NumNodes is the number of nodes that have the image.
	NumNodes int
}

// NodeInfo is the scheduler's view of one node: the Node object, the pods on
// it (bound or assumed) and what they use. Values obtained from a snapshot
// are read-only; use Snapshot to get a private copy.
type NodeInfo struct {
	// The fields Filter and Score read for every node come first, and the
	// node's name, unschedulable flag and taints are copied from the Node, so
	// that evaluating a node touches the NodeInfo's first cache lines only.
	node          *corev1.Node
	name          string
	taints        []corev1.Taint
	unschedulable bool
	// Allocatable is the node's allocatable resources.
	Allocatable Resource
	// Requested is the sum of the pods' requests. The three resource sums are
	// held inline rather than behind pointers.
	Requested Resource
	// NonZeroRequested is the same with scoring defaults applied.
	NonZeroRequested Resource
	// Pods are the pods on the node, bound or assumed.
	Pods []*PodInfo
	// ImageStates are the node's images, by normalised name (nil when none).
	ImageStates map[string]*ImageStateSummary
	// PodsWithAffinity are the pods with any (anti-)affinity term.
	PodsWithAffinity []*PodInfo
	// PodsWithRequiredAntiAffinity are the pods with required anti-affinity.
	PodsWithRequiredAntiAffinity []*PodInfo
	// UsedPorts are the host ports in use.
	UsedPorts HostPortInfo
	// Generation changes whenever the NodeInfo changes; set by the owner (the
	// scheduler cache) to let snapshots update incrementally.
	Generation int64
}

// NewNodeInfo returns a NodeInfo holding pods and no node.
func NewNodeInfo(pods ...*corev1.Pod) *NodeInfo {
	n := &NodeInfo{}
	for _, p := range pods {
		pi, _ := NewPodInfo(p)
		n.AddPodInfo(pi)
	}
	return n
}

// Node returns the node, nil if unknown (pods seen before their node).
func (n *NodeInfo) Node() *corev1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// NodeName returns the node's name ("" when the node is unknown); it reads
// no more than the NodeInfo.
func (n *NodeInfo) NodeName() string { return n.name }

// Taints returns the node's spec.taints without reading the Node.
func (n *NodeInfo) Taints() []corev1.Taint { return n.taints }

// Unschedulable returns the node's spec.unschedulable without reading the
// Node.
func (n *NodeInfo) Unschedulable() bool { return n.unschedulable }

// SetNode sets the node and its allocatable resources.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.name, n.taints, n.unschedulable = node.Name, node.Spec.Taints, node.Spec.Unschedulable
	n.Allocatable = Resource{}
	n.Allocatable.Add(node.Status.Allocatable)
}

// RemoveNode forgets the node, keeping its pods.
func (n *NodeInfo) RemoveNode() {
	n.node, n.name, n.taints, n.unschedulable = nil, "", nil, false
}

// AddPod adds a pod.
func (n *NodeInfo) AddPod(pod *corev1.Pod) {
	pi, _ := NewPodInfo(pod)
	n.AddPodInfo(pi)
}

// AddPodInfo adds a pod.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if hasAffinity(pi) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with the same UID (or namespace/name when UIDs
// are empty).
func (n *NodeInfo) RemovePod(pod *corev1.Pod) error {
	match := func(pi *PodInfo) bool { return samePod(pi.Pod, pod) }
	i := slices.IndexFunc(n.Pods, match)
	if i < 0 {
		return fmt.Errorf("no pod %s/%s on node %s", pod.Namespace, pod.Name, n.nodeName())
	}
	pi := n.Pods[i]
	n.Pods = slices.Delete(slices.Clone(n.Pods), i, i+1)
	if j := slices.IndexFunc(n.PodsWithAffinity, match); j >= 0 {
		n.PodsWithAffinity = slices.Delete(slices.Clone(n.PodsWithAffinity), j, j+1)
	}
	if j := slices.IndexFunc(n.PodsWithRequiredAntiAffinity, match); j >= 0 {
		n.PodsWithRequiredAntiAffinity = slices.Delete(slices.Clone(n.PodsWithRequiredAntiAffinity), j, j+1)
	}
	n.update(pi, -1)
	return nil
}

func samePod(a, b *corev1.Pod) bool {
	if a.UID != "" && b.UID != "" {
		return a.UID == b.UID
	}
	return a.Namespace == b.Namespace && a.Name == b.Name
}

func (n *NodeInfo) nodeName() string {
	if n.node == nil {
		return "<unknown>"
	}
	return n.node.Name
}

func hasAffinity(pi *PodInfo) bool {
	return len(pi.RequiredAffinityTerms)+len(pi.RequiredAntiAffinityTerms)+
		len(pi.PreferredAffinityTerms)+len(pi.PreferredAntiAffinityTerms) > 0
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	if sign > 0 {
		n.Requested.AddResource(pi.Requests)
		n.NonZeroRequested.AddResource(pi.NonZeroRequests)
	} else {
		n.Requested.SubResource(pi.Requests)
		n.NonZeroRequested.SubResource(pi.NonZeroRequests)
	}
	if !pi.hasHostPorts {
		return
	}
	for _, c := range pi.Pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			if sign > 0 {
				if n.UsedPorts == nil {
					n.UsedPorts = HostPortInfo{}
				}
				n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
			} else {
				n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
			}
		}
	}
}

// Snapshot returns a copy that can be modified without affecting n (pods and
// their PodInfos are shared, slices and maps are not).
func (n *NodeInfo) Snapshot() *NodeInfo {
	c := &NodeInfo{
		node:                         n.node,
		name:                         n.name,
		taints:                       n.taints,
		unschedulable:                n.unschedulable,
		Pods:                         slices.Clone(n.Pods),
		PodsWithAffinity:             slices.Clone(n.PodsWithAffinity),
		PodsWithRequiredAntiAffinity: slices.Clone(n.PodsWithRequiredAntiAffinity),
		UsedPorts:                    n.UsedPorts.Clone(),
		Requested:                    n.Requested.clone(),
		NonZeroRequested:             n.NonZeroRequested.clone(),
		Allocatable:                  n.Allocatable.clone(),
		ImageStates:                  n.ImageStates,
		Generation:                   n.Generation,
	}
	return c
}

// String summarises the node for logs.
func (n *NodeInfo) String() string {
	return fmt.Sprintf("&NodeInfo{Node:%s, Pods:%d, Requested:%+v, Allocatable:%+v}", n.nodeName(), len(n.Pods), n.Requested, n.Allocatable)
}

// DefaultBindAllHostIP is the host IP meaning "all addresses".
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is a protocol and port pair.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo records host ports in use: IP -> protocol/port -> count.
type HostPortInfo map[string]map[ProtocolPort]int

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return ip, protocol
}

// Add records a port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]int{}
	}
	h[ip][ProtocolPort{protocol, port}]++
}

// Remove forgets a port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if m := h[ip]; m != nil {
		if m[pp]--; m[pp] <= 0 {
			delete(m, pp)
		}
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// Len returns the number of distinct IP/protocol/port entries.
func (h HostPortInfo) Len() int {
	n := 0
	for _, m := range h {
		n += len(m)
	}
	return n
}

// CheckConflict reports whether the port is taken: 0.0.0.0 conflicts with the
// same protocol/port on any IP, and a specific IP with itself and 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if m[pp] > 0 {
				return true
			}
		}
		return false
	}
	return h[ip][pp] > 0 || h[DefaultBindAllHostIP][pp] > 0
}

// Clone returns a deep copy (nil for an empty set).
func (h HostPortInfo) Clone() HostPortInfo {
	if len(h) == 0 {
		return nil
	}
	c := make(HostPortInfo, len(h))
	for ip, m := range h {
		cm := make(map[ProtocolPort]int, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c[ip] = cm
	}
	return c
}
