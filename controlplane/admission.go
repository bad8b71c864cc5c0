package controlplane

import (
	"context"
	"encoding/json"
	"errors"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	nodev1 "github.com/converge-dev/converge/builtin/api/node/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// podStrategy adds Kubernetes' Priority and RuntimeClass admission steps to
// the pods strategy: spec.priorityClassName (or the global default class)
// resolves spec.priority; spec.runtimeClassName must name a RuntimeClass,
// whose overhead and scheduling constraints the pod gets.
type podStrategy struct {
	registry.Typed[corev1.Pod]
	priority     schedulingv1.PodPriority
	runtimeClass nodev1.PodRuntimeClass
}

func (s podStrategy) AdmitCreate(ctx context.Context, obj map[string]any) (registry.Admission, error) {
	if err := s.runtimeClass.AdmitPod(ctx, obj); err != nil {
		return registry.Admission{}, err
	}
	return registry.Admission{}, s.priority.AdmitPod(ctx, obj)
}

// AdmitUpdate admits everything: spec.priority is immutable (ValidatePodUpdate).
func (podStrategy) AdmitUpdate(context.Context, map[string]any, map[string]any) (registry.Admission, error) {
	return registry.Admission{}, nil
}

// priorityClassStrategy refuses a second globalDefault class.
type priorityClassStrategy struct {
	registry.Typed[schedulingv1.PriorityClass]
	priority schedulingv1.PodPriority
}

func (s priorityClassStrategy) AdmitCreate(ctx context.Context, obj map[string]any) (registry.Admission, error) {
	return registry.Admission{}, s.priority.AdmitPriorityClass(ctx, obj)
}

func (s priorityClassStrategy) AdmitUpdate(ctx context.Context, obj, _ map[string]any) (registry.Admission, error) {
	return registry.Admission{}, s.priority.AdmitPriorityClass(ctx, obj)
}

// runtimeClassAdmission reads RuntimeClasses from storage.
func (cp *ControlPlane) runtimeClassAdmission() nodev1.PodRuntimeClass {
	return nodev1.PodRuntimeClass{Get: func(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
		kv, err := cp.store.Get(ctx, "/registry/node.k8s.io/runtimeclasses/"+name)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		rc := &nodev1.RuntimeClass{}
		return rc, json.Unmarshal(kv.Value, rc)
	}}
}

// priorityAdmission reads PriorityClasses from storage.
func (cp *ControlPlane) priorityAdmission() schedulingv1.PodPriority {
	const prefix = "/registry/scheduling.k8s.io/priorityclasses/"
	decode := func(v []byte) (*schedulingv1.PriorityClass, error) {
		pc := &schedulingv1.PriorityClass{}
		return pc, json.Unmarshal(v, pc)
	}
	return schedulingv1.PodPriority{
		Get: func(ctx context.Context, name string) (*schedulingv1.PriorityClass, error) {
			kv, err := cp.store.Get(ctx, prefix+name)
			if errors.Is(err, storage.ErrNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return decode(kv.Value)
		},
		List: func(ctx context.Context) ([]*schedulingv1.PriorityClass, error) {
			res, err := cp.store.List(ctx, prefix, storage.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*schedulingv1.PriorityClass, 0, len(res.Items))
			for _, kv := range res.Items {
				pc, err := decode(kv.Value)
				if err != nil {
					return nil, err
				}
				out = append(out, pc)
			}
			return out, nil
		},
	}
}
