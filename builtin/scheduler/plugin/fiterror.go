package plugin

import (
	"fmt"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// NoNodeAvailableMsg starts every FailedScheduling summary.
const NoNodeAvailableMsg = "0/%v nodes are available"

// NodeToStatusReader reads the per-node filter results of a failed cycle.
type NodeToStatusReader interface {
	// Get returns the status of a node: its recorded status, or the status of
	// nodes not evaluated (absent), which is UnschedulableAndUnresolvable when
	// PreFilter narrowed the node set.
	Get(nodeName string) *Status
	// NodesForStatusCode returns the nodes of the lister whose status has code.
	NodesForStatusCode(lister NodeInfoLister, code Code) ([]*NodeInfo, error)
}

// NodeToStatus maps node names to their rejection status.
type NodeToStatus struct {
	nodeToStatus map[string]*Status
	absent       *Status
}

// NewNodeToStatus returns a map; absent is the status of nodes not in it (nil
// for "not evaluated, treat as Unschedulable-resolvable").
func NewNodeToStatus(m map[string]*Status, absent *Status) *NodeToStatus {
	if m == nil {
		m = map[string]*Status{}
	}
	return &NodeToStatus{nodeToStatus: m, absent: absent}
}

// NewDefaultNodeToStatus returns an empty map whose absent nodes are
// UnschedulableAndUnresolvable.
func NewDefaultNodeToStatus() *NodeToStatus {
	return NewNodeToStatus(nil, NewStatus(UnschedulableAndUnresolvable))
}

// Get implements NodeToStatusReader.
func (m *NodeToStatus) Get(nodeName string) *Status {
	if s, ok := m.nodeToStatus[nodeName]; ok {
		return s
	}
	return m.absent
}

// Set records a node's status.
func (m *NodeToStatus) Set(nodeName string, s *Status) { m.nodeToStatus[nodeName] = s }

// SetAbsentNodesStatus sets the status of nodes not in the map.
func (m *NodeToStatus) SetAbsentNodesStatus(s *Status) { m.absent = s }

// Len returns the number of recorded nodes.
func (m *NodeToStatus) Len() int { return len(m.nodeToStatus) }

// ForEach calls fn for every recorded node.
func (m *NodeToStatus) ForEach(fn func(nodeName string, s *Status)) {
	for n, s := range m.nodeToStatus {
		fn(n, s)
	}
}

// NodesForStatusCode implements NodeToStatusReader.
func (m *NodeToStatus) NodesForStatusCode(lister NodeInfoLister, code Code) ([]*NodeInfo, error) {
	all, err := lister.List()
	if err != nil {
		return nil, err
	}
	var out []*NodeInfo
	for _, ni := range all {
		s := m.Get(ni.Node().Name)
		c := s.Code()
		if s == nil && m.absent == nil {
			// Not evaluated and no absent status: resolvable.
			c = Unschedulable
		}
		if c == code {
			out = append(out, ni)
		}
	}
	return out, nil
}

// Diagnosis records why a pod did not fit.
type Diagnosis struct {
	// NodeToStatus holds each rejected node's status.
	NodeToStatus *NodeToStatus
	// UnschedulablePlugins are the plugins that rejected the pod; the queue
	// uses them to decide which cluster events may help.
	UnschedulablePlugins map[string]struct{}
	// PendingPlugins are plugins that returned Pending.
	PendingPlugins map[string]struct{}
	// PreFilterMsg is the message of a PreFilter rejection.
	PreFilterMsg string
	// PostFilterMsg is the message of the PostFilter plugins.
	PostFilterMsg string
}

// AddPluginStatus records the plugin of a rejection status.
func (d *Diagnosis) AddPluginStatus(s *Status) {
	if s.Plugin() == "" {
		return
	}
	if s.Code() == Pending {
		if d.PendingPlugins == nil {
			d.PendingPlugins = map[string]struct{}{}
		}
		d.PendingPlugins[s.Plugin()] = struct{}{}
		return
	}
	if s.IsRejected() {
		if d.UnschedulablePlugins == nil {
			d.UnschedulablePlugins = map[string]struct{}{}
		}
		d.UnschedulablePlugins[s.Plugin()] = struct{}{}
	}
}

// FitError is returned when no node fits a pod. Its Error is the summary of
// the FailedScheduling event, worded like Kubernetes':
// "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated
// taint {dedicated: gpu}. preemption: ...".
type FitError struct {
	Pod         *corev1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error implements error.
func (f *FitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, NoNodeAvailableMsg+":", f.NumAllNodes)
	if msg := f.Diagnosis.PreFilterMsg; msg != "" {
		fmt.Fprintf(&b, " %v.", msg)
	} else if f.Diagnosis.NodeToStatus != nil {
		// Histogram of reasons, sorted as strings like Kubernetes.
		counts := map[string]int{}
		f.Diagnosis.NodeToStatus.ForEach(func(_ string, s *Status) {
			for _, r := range s.Reasons() {
				counts[r]++
			}
		})
		parts := make([]string, 0, len(counts))
		for r, n := range counts {
			parts = append(parts, fmt.Sprintf("%v %v", n, r))
		}
		slices.Sort(parts)
		if len(parts) > 0 {
			fmt.Fprintf(&b, " %v.", strings.Join(parts, ", "))
		}
	}
	if msg := strings.TrimSuffix(f.Diagnosis.PostFilterMsg, "."); msg != "" {
		// The preemption message is itself a FitError summary ending in "."; it
		// is trimmed so the combined message does not end in "..".
		fmt.Fprintf(&b, " %v.", msg)
	}
	return b.String()
}
