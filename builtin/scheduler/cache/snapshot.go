package cache

import (
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Snapshot is an immutable view of the nodes for one scheduling cycle. It
// implements plugin.SharedLister and plugin.NodeInfoLister.
type Snapshot struct {
	nodeInfoMap                          map[string]*plugin.NodeInfo
	nodeInfoList                         []*plugin.NodeInfo
	havePodsWithAffinityList             []*plugin.NodeInfo
	havePodsWithRequiredAntiAffinityList []*plugin.NodeInfo
	generation                           int64
}

var (
	_ plugin.SharedLister   = (*Snapshot)(nil)
	_ plugin.NodeInfoLister = (*Snapshot)(nil)
)

// NewEmptySnapshot returns a snapshot with no nodes, to be filled by
// Cache.UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*plugin.NodeInfo{}}
}

// NewSnapshot builds a snapshot directly from objects; pods are placed on the
// node named by spec.nodeName. For tests and simulations.
func NewSnapshot(pods []*corev1.Pod, nodes []*corev1.Node) *Snapshot {
	m := map[string]*plugin.NodeInfo{}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		ni := m[p.Spec.NodeName]
		if ni == nil {
			ni = plugin.NewNodeInfo()
			m[p.Spec.NodeName] = ni
		}
		ni.AddPod(p)
	}
	images := map[string]*plugin.ImageStateSummary{}
	for _, n := range nodes {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				s := images[NormalizeImageName(name)]
				if s == nil {
					s = &plugin.ImageStateSummary{Size: img.SizeBytes}
					images[NormalizeImageName(name)] = s
				}
				s.NumNodes++
			}
		}
	}
	s := NewEmptySnapshot()
	for _, n := range nodes {
		ni := m[n.Name]
		if ni == nil {
			ni = plugin.NewNodeInfo()
		}
		ni.SetNode(n)
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				if ni.ImageStates == nil {
					ni.ImageStates = map[string]*plugin.ImageStateSummary{}
				}
				ni.ImageStates[NormalizeImageName(name)] = images[NormalizeImageName(name)]
			}
		}
		s.nodeInfoMap[n.Name] = ni
		s.nodeInfoList = append(s.nodeInfoList, ni)
	}
	s.rebuildAffinityLists()
	return s
}

func (s *Snapshot) rebuildAffinityLists() {
	s.havePodsWithAffinityList = s.havePodsWithAffinityList[:0]
	s.havePodsWithRequiredAntiAffinityList = s.havePodsWithRequiredAntiAffinityList[:0]
	for _, ni := range s.nodeInfoList {
		if len(ni.PodsWithAffinity) > 0 {
			s.havePodsWithAffinityList = append(s.havePodsWithAffinityList, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
			s.havePodsWithRequiredAntiAffinityList = append(s.havePodsWithRequiredAntiAffinityList, ni)
		}
	}
}

// NodeInfos implements plugin.SharedLister.
func (s *Snapshot) NodeInfos() plugin.NodeInfoLister { return s }

// NumNodes returns the number of nodes.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// List implements plugin.NodeInfoLister; the order interleaves zones.
func (s *Snapshot) List() ([]*plugin.NodeInfo, error) { return s.nodeInfoList, nil }

// HavePodsWithAffinityList implements plugin.NodeInfoLister.
func (s *Snapshot) HavePodsWithAffinityList() ([]*plugin.NodeInfo, error) {
	return s.havePodsWithAffinityList, nil
}

// HavePodsWithRequiredAntiAffinityList implements plugin.NodeInfoLister.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() ([]*plugin.NodeInfo, error) {
	return s.havePodsWithRequiredAntiAffinityList, nil
}

// Get implements plugin.NodeInfoLister.
func (s *Snapshot) Get(nodeName string) (*plugin.NodeInfo, error) {
	if ni, ok := s.nodeInfoMap[nodeName]; ok && ni.Node() != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo %q: %w", nodeName, plugin.ErrNotFound)
}
