package quota

import (
	"maps"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// Add returns a+b (keys of either).
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a)+len(b))
	maps.Copy(out, a)
	for k, v := range b {
		if cur, ok := out[k]; ok {
			out[k] = cur.Add(v)
		} else {
			out[k] = v
		}
	}
	return out
}

// SubtractNonNegative returns a-b for the keys of a, never below zero.
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a))
	for k, v := range a {
		if o, ok := b[k]; ok {
			v = v.Sub(o)
			if v.Sign() < 0 {
				v = api.Quantity{S: "0"}
			}
		}
		out[k] = v
	}
	return out
}

// Mask returns the entries of list named in names.
func Mask(list corev1.ResourceList, names []string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if v, ok := list[n]; ok {
			out[n] = v
		}
	}
	return out
}

// RemoveZeros returns list without its zero entries.
func RemoveZeros(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range list {
		if v.Sign() != 0 {
			out[k] = v
		}
	}
	return out
}

// LessThanOrEqual reports whether every entry of a is at most the entry of b
// with the same name (a name b lacks is not limited), and the names that
// exceed, sorted.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []string) {
	var exceeded []string
	for k, v := range a {
		if limit, ok := b[k]; ok && v.Cmp(limit) > 0 {
			exceeded = append(exceeded, k)
		}
	}
	slices.Sort(exceeded)
	return len(exceeded) == 0, exceeded
}

// Equals reports whether a and b have the same names with equal values.
func Equals(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		o, ok := b[k]
		if !ok || v.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// Names returns the names of list, sorted.
func Names(list corev1.ResourceList) []string { return slices.Sorted(maps.Keys(list)) }

// Intersection returns the names in a that are also in b, in a's order.
func Intersection(a, b []string) []string {
	var out []string
	for _, n := range a {
		if slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// prettyPrint renders list as Kubernetes' quota messages do: "a=1,b=2",
// sorted by name.
func prettyPrint(list corev1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, k := range Names(list) {
		parts = append(parts, k+"="+list[k].String())
	}
	return strings.Join(parts, ",")
}

// one is the quantity 1.
var one = api.Quantity{S: "1"}

// zero is the quantity 0.
var zero = api.Quantity{S: "0"}
