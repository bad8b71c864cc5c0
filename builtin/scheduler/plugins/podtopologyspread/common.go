package podtopologyspread

import (
	"fmt"
	"slices"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/nodeselector"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/taints"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
)

// Well-known node labels used by the default constraints.
const (
	LabelHostname     = "kubernetes.io/hostname"
	LabelTopologyZone = "topology.kubernetes.io/zone"
)

// Failure reasons, worded like kube-scheduler's.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// SystemDefaultConstraints are Kubernetes' cluster-level default constraints,
// applied (with a selector derived from the pod's owners and services) to pods
// without constraints of their own.
func SystemDefaultConstraints() []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{
		{TopologyKey: LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
	}
}

// constraint is a parsed TopologySpreadConstraint with defaults applied.
type constraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy corev1.NodeInclusionPolicy
	NodeTaintsPolicy   corev1.NodeInclusionPolicy
}

// buildConstraints parses the constraints of pod whose whenUnsatisfiable is
// action. matchLabelKeys are merged into the selector as In requirements on the
// pod's own label values (keys the pod lacks are ignored).
func buildConstraints(pod *corev1.Pod, cs []corev1.TopologySpreadConstraint, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	var out []constraint
	for _, c := range cs {
		if c.WhenUnsatisfiable != action {
			continue
		}
		ls := c.LabelSelector
		if ls != nil && len(c.MatchLabelKeys) > 0 {
			merged := &api.LabelSelector{MatchLabels: ls.MatchLabels, MatchExpressions: slices.Clone(ls.MatchExpressions)}
			for _, k := range c.MatchLabelKeys {
				if v, ok := pod.Labels[k]; ok {
					merged.MatchExpressions = append(merged.MatchExpressions,
						api.LabelSelectorRequirement{Key: k, Operator: api.LabelSelectorOpIn, Values: []string{v}})
				}
			}
			ls = merged
		}
		sel, err := labels.FromLabelSelector(ls)
		if err != nil {
			return nil, fmt.Errorf("topology spread constraint %q: %w", c.TopologyKey, err)
		}
		out = append(out, newConstraint(c, sel))
	}
	return out, nil
}

func newConstraint(c corev1.TopologySpreadConstraint, sel labels.Selector) constraint {
	out := constraint{
		MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, Selector: sel, MinDomains: 1,
		NodeAffinityPolicy: corev1.NodeInclusionPolicyHonor, NodeTaintsPolicy: corev1.NodeInclusionPolicyIgnore,
	}
	if c.MinDomains != nil {
		out.MinDomains = *c.MinDomains
	}
	if c.NodeAffinityPolicy != nil {
		out.NodeAffinityPolicy = *c.NodeAffinityPolicy
	}
	if c.NodeTaintsPolicy != nil {
		out.NodeTaintsPolicy = *c.NodeTaintsPolicy
	}
	return out
}

// defaultConstraints applies the default constraints whose whenUnsatisfiable is
// action with selector; an empty selector (nothing selects the pod) gives none.
func defaultConstraints(defaults []corev1.TopologySpreadConstraint, sel labels.Selector, action corev1.UnsatisfiableConstraintAction) []constraint {
	if sel == nil || sel.Empty() {
		return nil
	}
	var out []constraint
	for _, c := range defaults {
		if c.WhenUnsatisfiable == action {
			out = append(out, newConstraint(c, sel))
		}
	}
	return out
}

// matchNodeInclusionPolicies reports whether node counts for c when spreading
// pod: with Honor, the pod's node selector and required node affinity must
// match (nodeAffinityPolicy) and every NoSchedule/NoExecute taint must be
// tolerated (nodeTaintsPolicy).
func (c *constraint) matchNodeInclusionPolicies(pod *corev1.Pod, node *corev1.Node) bool {
	if c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor && !nodeselector.RequiredNodeAffinityMatches(pod, node) {
		return false
	}
	if c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
		if _, untolerated := taints.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, taints.DoNotScheduleTaintsFilter); untolerated {
			return false
		}
	}
	return true
}

// nodeLabelsMatchConstraints reports whether the node has every topology key.
func nodeLabelsMatchConstraints(nodeLabels map[string]string, cs []constraint) bool {
	for _, c := range cs {
		if _, ok := nodeLabels[c.TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// countPodsMatchSelector counts the pods of ns matching sel that are not being
// deleted.
func countPodsMatchSelector(pods []*plugin.PodInfo, sel labels.Selector, ns string) int {
	n := 0
	for _, pi := range pods {
		p := pi.Pod
		if p.DeletionTimestamp != nil || p.Namespace != ns {
			continue
		}
		if sel.Matches(p.Labels) {
			n++
		}
	}
	return n
}
