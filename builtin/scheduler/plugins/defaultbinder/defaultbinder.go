package defaultbinder

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
)

// Name is the plugin name.
const Name = "DefaultBinder"

// DefaultBinder implements plugin.BindPlugin.
type DefaultBinder struct{ h plugin.Handle }

var _ plugin.BindPlugin = (*DefaultBinder)(nil)

// New is the plugin factory.
func New(_ context.Context, _ any, h plugin.Handle) (plugin.Plugin, error) {
	return &DefaultBinder{h: h}, nil
}

// Name implements plugin.Plugin.
func (*DefaultBinder) Name() string { return Name }

// Bind implements plugin.BindPlugin.
func (b *DefaultBinder) Bind(ctx context.Context, _ *plugin.CycleState, pod *corev1.Pod, nodeName string) *plugin.Status {
	c := b.h.Client()
	if c == nil {
		return plugin.AsStatus(fmt.Errorf("bind pod %s/%s: no client", pod.Namespace, pod.Name))
	}
	binding := &corev1.Binding{
		ObjectMeta: api.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := c.SubResource("binding").Create(ctx, pod, binding); err != nil {
		return plugin.AsStatus(fmt.Errorf("bind pod %s/%s to %s: %w", pod.Namespace, pod.Name, nodeName, err))
	}
	return nil
}
