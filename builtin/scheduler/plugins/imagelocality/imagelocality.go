package imagelocality

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/cache"
	"github.com/converge-dev/converge/builtin/scheduler/framework"
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

// ImageLocality implements framework.ScorePlugin.
type ImageLocality struct{ h framework.Handle }

var _ framework.ScorePlugin = (*ImageLocality)(nil)

// New is the plugin factory.
func New(_ context.Context, _ any, h framework.Handle) (framework.Plugin, error) {
	return &ImageLocality{h: h}, nil
}

// Name implements framework.Plugin.
func (*ImageLocality) Name() string { return Name }

// Score implements framework.ScorePlugin.
func (p *ImageLocality) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	nodes, err := p.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	return Score(pod, ni, len(nodes)), nil
}

// Score computes the score of the node for the pod in a cluster of totalNodes.
func Score(pod *corev1.Pod, ni *framework.NodeInfo, totalNodes int) int64 {
	var sum int64
	containers := 0
	add := func(cs []corev1.Container) {
		for _, c := range cs {
			containers++
			if s, ok := ni.ImageStates[cache.NormalizeImageName(c.Image)]; ok && totalNodes > 0 {
				sum += int64(float64(s.Size) * float64(s.NumNodes) / float64(totalNodes))
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	maxThreshold := maxContainerThreshold * int64(max(containers, 1))
	sum = min(max(sum, minThreshold), maxThreshold)
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

// ScoreExtensions implements framework.ScorePlugin.
func (*ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }
