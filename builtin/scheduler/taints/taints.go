package taints

import (
	"strconv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// Tolerates reports whether the toleration tolerates the taint: effects must
// match (an empty toleration effect matches all), keys must match (an empty
// key with Exists matches all), and values must be equal for Equal (the
// default), or compare as integers for Gt/Lt.
func Tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpGt, corev1.TolerationOpLt:
		tv, err1 := strconv.ParseInt(t.Value, 10, 64)
		nv, err2 := strconv.ParseInt(taint.Value, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if t.Operator == corev1.TolerationOpGt {
			return nv > tv
		}
		return nv < tv
	}
	return false
}

// TolerationsTolerateTaint reports whether any toleration tolerates the taint.
func TolerationsTolerateTaint(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if Tolerates(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// FindMatchingUntoleratedTaint returns the first taint accepted by include
// (nil: all) that no toleration tolerates.
func FindMatchingUntoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration, include func(*corev1.Taint) bool) (corev1.Taint, bool) {
	for i := range taints {
		if include != nil && !include(&taints[i]) {
			continue
		}
		if !TolerationsTolerateTaint(tolerations, &taints[i]) {
			return taints[i], true
		}
	}
	return corev1.Taint{}, false
}

// DoNotScheduleTaintsFilter accepts NoSchedule and NoExecute taints.
func DoNotScheduleTaintsFilter(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}
