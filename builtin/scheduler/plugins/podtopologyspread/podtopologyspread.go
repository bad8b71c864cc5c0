package podtopologyspread

import (
	"context"
	"errors"
	"fmt"
	"maps"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/cache"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "PodTopologySpread"

// Defaulting types of Args.DefaultingType.
const (
	// SystemDefaulting uses SystemDefaultConstraints.
	SystemDefaulting = "System"
	// ListDefaulting uses Args.DefaultConstraints.
	ListDefaulting = "List"
)

var errNodeNotFound = errors.New("podtopologyspread: node not found")

// Args configure the plugin (pluginConfig args, Kubernetes' PodTopologySpreadArgs).
type Args struct {
	// DefaultConstraints apply, with ListDefaulting, to pods without
	// constraints; they must not have a labelSelector.
	DefaultConstraints []corev1.TopologySpreadConstraint `json:"defaultConstraints,omitempty"`
	// DefaultingType is System (the default) or List.
	DefaultingType string `json:"defaultingType,omitempty"`
}

// PodTopologySpread is the plugin. Its fields are set by New; tests build it
// with newPlugin.
type PodTopologySpread struct {
	defaults        []corev1.TopologySpreadConstraint
	systemDefaulted bool
	// allNodes lists every node of the cycle's snapshot (PreScore).
	allNodes func() ([]*plugin.NodeInfo, error)
	// defaultSelector returns the selector of the default constraints for a pod
	// (services and controllers selecting it); nil disables the defaults.
	defaultSelector func(pod *corev1.Pod) labels.Selector
}

var (
	_ plugin.PreFilterPlugin     = (*PodTopologySpread)(nil)
	_ plugin.FilterPlugin        = (*PodTopologySpread)(nil)
	_ plugin.PreScorePlugin      = (*PodTopologySpread)(nil)
	_ plugin.ScorePlugin         = (*PodTopologySpread)(nil)
	_ plugin.EnqueueExtensions   = (*PodTopologySpread)(nil)
	_ plugin.PreFilterExtensions = (*PodTopologySpread)(nil)
)

// New is the plugin factory: args are Args (nil means System defaulting). It
// reads nodes from h's snapshot and, for the default constraints, services,
// replica sets and stateful sets from h's informers (requested here, so they
// run with the scheduler's); without informers the defaults are off.
func New(_ context.Context, args any, h plugin.Handle) (plugin.Plugin, error) {
	a := Args{DefaultingType: SystemDefaulting}
	if err := plugin.DecodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	pl := &PodTopologySpread{
		allNodes: func() ([]*plugin.NodeInfo, error) { return h.SnapshotSharedLister().NodeInfos().List() },
	}
	switch a.DefaultingType {
	case SystemDefaulting, "":
		if len(a.DefaultConstraints) > 0 {
			return nil, fmt.Errorf("%s: defaultConstraints must be empty with defaultingType System", Name)
		}
		pl.defaults, pl.systemDefaulted = SystemDefaultConstraints(), true
	case ListDefaulting:
		for _, c := range a.DefaultConstraints {
			if c.LabelSelector != nil {
				return nil, fmt.Errorf("%s: default constraint %q must not have a labelSelector", Name, c.TopologyKey)
			}
		}
		pl.defaults = a.DefaultConstraints
	default:
		return nil, fmt.Errorf("%s: defaultingType %q is not System or List", Name, a.DefaultingType)
	}
	if inf := h.Informers(); inf != nil && len(pl.defaults) > 0 {
		sel, err := newDefaultSelector(inf)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		pl.defaultSelector = sel
	}
	return pl, nil
}

// Name implements plugin.Plugin.
func (pl *PodTopologySpread) Name() string { return Name }

// constraints returns the pod's constraints with action, or the defaults'
// when the pod has none.
func (pl *PodTopologySpread) constraints(pod *corev1.Pod, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return buildConstraints(pod, pod.Spec.TopologySpreadConstraints, action)
	}
	if pl.defaultSelector == nil || len(pl.defaults) == 0 {
		return nil, nil
	}
	return defaultConstraints(pl.defaults, pl.defaultSelector(pod), action), nil
}

// EventsToRegister: pods coming, going or relabelled, and nodes added, deleted
// or relabelled, may change the counts.
func (pl *PodTopologySpread) EventsToRegister() []plugin.ClusterEventWithHint {
	return []plugin.ClusterEventWithHint{
		{Event: plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Add | plugin.UpdatePodLabel | plugin.Delete}},
		{Event: plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add | plugin.Delete | plugin.UpdateNodeLabel | plugin.UpdateNodeTaint}},
	}
}

// newDefaultSelector returns Kubernetes' DefaultSelector over informers: the
// union of the selectors of the services that select the pod and of its
// controlling ReplicaSet or StatefulSet.
func newDefaultSelector(inf *cache.SharedInformers) (func(*corev1.Pod) labels.Selector, error) {
	svcs, err := cache.InformerFor(inf, cache.InformerOptions[*corev1.Service]{})
	if err != nil {
		return nil, err
	}
	rss, err := cache.InformerFor(inf, cache.InformerOptions[*appsv1.ReplicaSet]{})
	if err != nil {
		return nil, err
	}
	sss, err := cache.InformerFor(inf, cache.InformerOptions[*appsv1.StatefulSet]{})
	if err != nil {
		return nil, err
	}
	return func(pod *corev1.Pod) labels.Selector {
		var services []map[string]string
		list, _ := svcs.Store().ByIndex(cache.NamespaceIndex, pod.Namespace)
		for _, s := range list {
			services = append(services, s.Spec.Selector)
		}
		var owner *labelSelectorSource
		for _, ref := range pod.OwnerReferences {
			if ref.Controller == nil || !*ref.Controller || ref.APIVersion != "apps/v1" {
				continue
			}
			switch ref.Kind {
			case "ReplicaSet":
				if rs, ok := rss.Store().Get(pod.Namespace + "/" + ref.Name); ok {
					owner = &labelSelectorSource{rs.Spec.Selector}
				}
			case "StatefulSet":
				if ss, ok := sss.Store().Get(pod.Namespace + "/" + ref.Name); ok {
					owner = &labelSelectorSource{ss.Spec.Selector}
				}
			}
		}
		return defaultSelector(pod, services, owner)
	}, nil
}

// labelSelectorSource is the selector of a pod's controller.
type labelSelectorSource struct{ selector *api.LabelSelector }

// defaultSelector merges the selectors of the services that select pod (a
// service with an empty selector selects nothing) with its controller's
// selector requirements.
func defaultSelector(pod *corev1.Pod, services []map[string]string, owner *labelSelectorSource) labels.Selector {
	set := map[string]string{}
	for _, s := range services {
		if len(s) == 0 || !labels.SelectorFromSet(s).Matches(pod.Labels) {
			continue
		}
		maps.Copy(set, s)
	}
	reqs := labels.SelectorFromSet(set).Requirements()
	if owner != nil {
		if sel, err := labels.FromLabelSelector(owner.selector); err == nil {
			reqs = append(reqs, sel.Requirements()...)
		}
	}
	return labels.NewSelector(reqs...)
}
