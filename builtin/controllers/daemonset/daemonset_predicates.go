package daemonset

import (
	"slices"
	"strconv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// Taints Kubernetes' node lifecycle sets and daemon pods tolerate.
const (
	taintNodeDiskPressure       = "node.kubernetes.io/disk-pressure"
	taintNodeMemoryPressure     = "node.kubernetes.io/memory-pressure"
	taintNodePIDPressure        = "node.kubernetes.io/pid-pressure"
	taintNodeUnschedulable      = "node.kubernetes.io/unschedulable"
	taintNodeNetworkUnavailable = "node.kubernetes.io/network-unavailable"
)

// daemonTolerations adds the tolerations every daemon pod gets, like
// Kubernetes, to spec.
func daemonTolerations(spec *corev1.PodSpec) {
	add := func(key string, effect corev1.TaintEffect) {
		for _, t := range spec.Tolerations {
			if t.Key == key && t.Effect == effect && t.Operator == corev1.TolerationOpExists && t.TolerationSeconds == nil {
				return
			}
		}
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(taintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(taintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(taintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(taintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(taintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
}

// nodePlacement says whether a daemon pod (spec, with the daemon tolerations)
// should be created on node, and whether an existing one may keep running.
func nodePlacement(spec *corev1.PodSpec, node *corev1.Node) (shouldRun, shouldContinue bool) {
	if !matchesNodeSelector(spec, node) || !matchesRequiredAffinity(spec, node) {
		return false, false
	}
	shouldRun, shouldContinue = true, true
	for _, taint := range node.Spec.Taints {
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool { return tolerates(t, taint) }) {
			continue
		}
		shouldRun = false
		if taint.Effect == corev1.TaintEffectNoExecute {
			shouldContinue = false
		}
	}
	return shouldRun, shouldContinue
}

func tolerates(t corev1.Toleration, taint corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key == "" {
		return t.Operator == corev1.TolerationOpExists
	}
	if t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return t.Value == taint.Value
	}
	return false
}

func matchesNodeSelector(spec *corev1.PodSpec, node *corev1.Node) bool {
	for k, v := range spec.NodeSelector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// matchesRequiredAffinity evaluates the required node affinity: the terms are
// ORed, the requirements of a term ANDed; a term without requirements
// matches nothing.
func matchesRequiredAffinity(spec *corev1.PodSpec, node *corev1.Node) bool {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil ||
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	fields := map[string]string{"metadata.name": node.Name}
	for _, term := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue
		}
		ok := true
		for _, req := range term.MatchExpressions {
			ok = ok && matchRequirement(req, node.Labels)
		}
		for _, req := range term.MatchFields {
			ok = ok && matchRequirement(req, fields)
		}
		if ok {
			return true
		}
	}
	return false
}

func matchRequirement(req corev1.NodeSelectorRequirement, set map[string]string) bool {
	v, has := set[req.Key]
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(req.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(req.Values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(req.Values) != 1 {
			return false
		}
		got, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(req.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if req.Operator == corev1.NodeSelectorOpGt {
			return got > want
		}
		return got < want
	}
	return false
}

// pinToNode replaces the required node affinity of spec with one term
// selecting node by metadata.name, like Kubernetes (the controller already
// checked that node satisfies the template's own affinity).
func pinToNode(spec *corev1.PodSpec, node string) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}},
		}}},
	}
}

// targetNode is the node a daemon pod is for: spec.nodeName once bound, else
// the metadata.name its required affinity pins.
func targetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
