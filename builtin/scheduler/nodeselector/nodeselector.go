package nodeselector

import (
	"slices"
	"strconv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// FieldMetadataName is the only field matchFields supports.
const FieldMetadataName = "metadata.name"

// RequirementMatches evaluates one requirement against a value lookup.
func RequirementMatches(r *corev1.NodeSelectorRequirement, get func(string) (string, bool)) bool {
	v, ok := get(r.Key)
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		lv, err1 := strconv.ParseInt(v, 10, 64)
		rv, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return lv > rv
		}
		return lv < rv
	}
	return false
}

// TermMatches reports whether every requirement of the term matches; a term
// with no requirements matches nothing. matchFields support metadata.name
// with In and NotIn only.
func TermMatches(t *corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	labels := func(k string) (string, bool) { v, ok := node.Labels[k]; return v, ok }
	for i := range t.MatchExpressions {
		if !RequirementMatches(&t.MatchExpressions[i], labels) {
			return false
		}
	}
	fields := func(k string) (string, bool) {
		if k == FieldMetadataName {
			return node.Name, true
		}
		return "", false
	}
	for i := range t.MatchFields {
		f := &t.MatchFields[i]
		if f.Key != FieldMetadataName || (f.Operator != corev1.NodeSelectorOpIn && f.Operator != corev1.NodeSelectorOpNotIn) {
			return false
		}
		if !RequirementMatches(f, fields) {
			return false
		}
	}
	return true
}

// SelectorMatches reports whether any term matches (terms are ORed); nil
// matches every node, no terms match none.
func SelectorMatches(s *corev1.NodeSelector, node *corev1.Node) bool {
	if s == nil {
		return true
	}
	for i := range s.NodeSelectorTerms {
		if TermMatches(&s.NodeSelectorTerms[i], node) {
			return true
		}
	}
	return false
}

// RequiredNodeAffinityMatches reports whether node satisfies the pod's
// spec.nodeSelector and its required node affinity.
func RequiredNodeAffinityMatches(pod *corev1.Pod, node *corev1.Node) bool {
	for k, v := range pod.Spec.NodeSelector {
		if nv, ok := node.Labels[k]; !ok || nv != v {
			return false
		}
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		return SelectorMatches(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, node)
	}
	return true
}
