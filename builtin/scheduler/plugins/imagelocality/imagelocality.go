package imagelocality

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/cache"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
)

// Name is the plugin name.
const Name = "ImageLocality"

// Thresholds of kube-scheduler: images below 23 MB do not count, and a
// container's contribution is capped at 1000 MB.
const (
	mb                    int64 = 1024 * 1024
	minThreshold                = 23 * mb
	maxContainerThreshold       = 1000 * mb
)

const preScoreKey plugin.StateKey = "PreScore" + Name

// preScoreState is computed once per cycle: the pod's normalised image
// names and the number of nodes.
type preScoreState struct {
	images     []string
	totalNodes int
}

func (s *preScoreState) Clone() plugin.StateData { return s }

// ImageLocality implements plugin.PreScorePlugin and plugin.ScorePlugin.
type ImageLocality struct{ h plugin.Handle }

var (
	_ plugin.PreScorePlugin = (*ImageLocality)(nil)
	_ plugin.ScorePlugin    = (*ImageLocality)(nil)
)

// New is the plugin factory.
func New(_ context.Context, _ any, h plugin.Handle) (plugin.Plugin, error) {
	return &ImageLocality{h: h}, nil
}

// Name implements plugin.Plugin.
func (*ImageLocality) Name() string { return Name }

func imageNames(pod *corev1.Pod) []string {
	names := make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		names = append(names, cache.NormalizeImageName(c.Image))
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, cache.NormalizeImageName(c.Image))
	}
	return names
}

// PreScore implements plugin.PreScorePlugin: it normalises the pod's
// image names once instead of per node.
func (p *ImageLocality) PreScore(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, _ []*plugin.NodeInfo) *plugin.Status {
	nodes, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return plugin.AsStatus(err)
	}
	state.Write(preScoreKey, &preScoreState{images: imageNames(pod), totalNodes: len(nodes)})
	return nil
}

// Score implements plugin.ScorePlugin.
func (p *ImageLocality) Score(_ context.Context, state *plugin.CycleState, pod *corev1.Pod, ni *plugin.NodeInfo) (int64, *plugin.Status) {
	s, err := plugin.ReadState[*preScoreState](state, preScoreKey)
	if err != nil {
		nodes, err := p.h.SnapshotSharedLister().NodeInfos().List()
		if err != nil {
			return 0, plugin.AsStatus(err)
		}
		return Score(pod, ni, len(nodes)), nil
	}
	return scoreImages(s.images, ni, s.totalNodes), nil
}

// Score computes the score of the node for the pod in a cluster of totalNodes.
func Score(pod *corev1.Pod, ni *plugin.NodeInfo, totalNodes int) int64 {
	return scoreImages(imageNames(pod), ni, totalNodes)
}

// scoreImages scores a node for containers with the given normalised images.
func scoreImages(images []string, ni *plugin.NodeInfo, totalNodes int) int64 {
	var sum int64
	if len(ni.ImageStates) > 0 && totalNodes > 0 {
		for _, name := range images {
			if s, ok := ni.ImageStates[name]; ok {
				sum += int64(float64(s.Size) * float64(s.NumNodes) / float64(totalNodes))
			}
		}
	}
	maxThreshold := maxContainerThreshold * int64(max(len(images), 1))
	sum = min(max(sum, minThreshold), maxThreshold)
	return plugin.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

// ScoreExtensions implements plugin.ScorePlugin.
func (*ImageLocality) ScoreExtensions() plugin.ScoreExtensions { return nil }
