package v1

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

var podsResource = api.GroupResource{Resource: "pods"}

// PodRuntimeClass is Kubernetes' RuntimeClass admission step, over the objects
// of the pod create path (map[string]any as canonicalized by the pods
// strategy). Its lookup is a function field so it can read a watch cache,
// storage or a client; it must be safe for concurrent use.
type PodRuntimeClass struct {
	// Get returns the named class, or (nil, nil) when there is none.
	Get func(ctx context.Context, name string) (*RuntimeClass, error)
}

// AdmitPod resolves a new pod's spec.runtimeClassName: a missing class is
// refused; the class's overhead becomes spec.overhead (a pod that sets a
// different one, or sets one without a class that defines it, is refused);
// the class's node selector and tolerations are merged into the pod's (a
// conflicting node selector value is refused). Refusals are 403 Forbidden with
// Kubernetes' messages ("pod rejected: ...").
func (a PodRuntimeClass) AdmitPod(ctx context.Context, pod map[string]any) error {
	name := api.NestedString(pod, "metadata", "name")
	if name == "" {
		name = api.NestedString(pod, "metadata", "generateName")
	}
	forbid := func(format string, args ...any) error {
		return apierrors.NewForbidden(podsResource, name, fmt.Errorf("pod rejected: "+format, args...))
	}
	className := api.NestedString(pod, "spec", "runtimeClassName")
	podOverhead, hasOverhead := api.NestedField(pod, "spec", "overhead")
	hasOverhead = hasOverhead && podOverhead != nil
	if className == "" {
		if hasOverhead {
			return forbid("Pod Overhead set without corresponding RuntimeClass defined Overhead")
		}
		return nil
	}
	rc, err := a.Get(ctx, className)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("get RuntimeClass %s: %w", className, err))
	}
	if rc == nil {
		return forbid("RuntimeClass %q not found", className)
	}
	spec, err := registry.FromMap[corev1.PodSpec](api.NestedMap(pod, "spec"))
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("decode pod spec: %v", err))
	}
	if rc.Overhead != nil && rc.Overhead.PodFixed != nil {
		if hasOverhead && !reflect.DeepEqual(quantities(spec.Overhead), quantities(rc.Overhead.PodFixed)) {
			return forbid("Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		}
		over := map[string]any{}
		for k, q := range rc.Overhead.PodFixed {
			over[k] = q.String()
		}
		api.SetNestedField(pod, over, "spec", "overhead")
	} else if hasOverhead {
		return forbid("Pod Overhead set without corresponding RuntimeClass defined Overhead")
	}
	if s := rc.Scheduling; s != nil {
		if len(s.NodeSelector) > 0 {
			sel := maps.Clone(spec.NodeSelector)
			if sel == nil {
				sel = map[string]string{}
			}
			for k, v := range s.NodeSelector {
				if old, ok := sel[k]; ok && old != v {
					return forbid("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, old)
				}
				sel[k] = v
			}
			out := map[string]any{}
			for k, v := range sel {
				out[k] = v
			}
			api.SetNestedField(pod, out, "spec", "nodeSelector")
		}
		if len(s.Tolerations) > 0 {
			b, err := json.Marshal(mergeTolerations(spec.Tolerations, s.Tolerations))
			if err == nil {
				var list any
				if list, err = api.DecodeValue(b); err == nil {
					api.SetNestedField(pod, list, "spec", "tolerations")
				}
			}
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("encode tolerations: %w", err))
			}
		}
	}
	return nil
}

// quantities are a resource list's values in canonical milli-units, so that
// "1" and "1000m" compare equal.
func quantities(l corev1.ResourceList) map[string]int64 {
	out := make(map[string]int64, len(l))
	for k, q := range l {
		v, err := q.MilliValue()
		if err != nil {
			v = -1
		}
		out[k] = v
	}
	return out
}

// mergeTolerations merges the pod's and the class's tolerations as
// Kubernetes does: a toleration that another one in the result (or a later
// one of either list) already covers is left out, so the result has no
// redundant entries and keeps every distinct one.
func mergeTolerations(pod, class []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration(nil), pod...), class...)
	var out []corev1.Toleration
	for i, t := range all {
		covered := slices.ContainsFunc(out, func(have corev1.Toleration) bool { return covers(have, t) }) ||
			slices.ContainsFunc(all[i+1:], func(later corev1.Toleration) bool { return covers(later, t) })
		if !covered {
			out = append(out, t)
		}
	}
	return out
}

// covers reports whether toleration s tolerates every taint t tolerates.
func covers(s, t corev1.Toleration) bool {
	if reflect.DeepEqual(s, t) {
		return true
	}
	if s.Key != "" && s.Key != t.Key {
		return false
	}
	if s.Key == "" && s.Operator != corev1.TolerationOpExists {
		return false
	}
	if s.Effect != "" && s.Effect != t.Effect {
		return false
	}
	if s.Effect == corev1.TaintEffectNoExecute && s.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *s.TolerationSeconds) {
		return false
	}
	switch s.Operator {
	case corev1.TolerationOpEqual, "":
		return (t.Operator == corev1.TolerationOpEqual || t.Operator == "") && t.Value == s.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
