package controllerutil

import (
	"slices"

	"github.com/converge-dev/converge/framework/api"
)

// SetStatusCondition adds c to conds or updates the condition of the same type,
// and reports whether anything changed. lastTransitionTime is set (to
// c.LastTransitionTime if given, else now) when the condition is new or its
// status changes; otherwise the existing time is kept. Reason, message and
// observedGeneration are always copied: set c.ObservedGeneration to the
// object's metadata.generation so that readers know which spec it describes.
func SetStatusCondition(conds *[]api.Condition, c api.Condition) bool {
	now := c.LastTransitionTime
	if now.IsZero() {
		now = api.Now()
	}
	i := slices.IndexFunc(*conds, func(e api.Condition) bool { return e.Type == c.Type })
	if i < 0 {
		c.LastTransitionTime = now
		*conds = append(*conds, c)
		return true
	}
	cur := &(*conds)[i]
	changed := false
	if cur.Status != c.Status {
		cur.Status = c.Status
		cur.LastTransitionTime = now
		changed = true
	}
	if cur.Reason != c.Reason || cur.Message != c.Message || cur.ObservedGeneration != c.ObservedGeneration {
		cur.Reason, cur.Message, cur.ObservedGeneration = c.Reason, c.Message, c.ObservedGeneration
		changed = true
	}
	return changed
}

// FindStatusCondition returns the condition of type typ, or nil.
func FindStatusCondition(conds []api.Condition, typ string) *api.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// RemoveStatusCondition removes the condition of type typ and reports whether
// there was one.
func RemoveStatusCondition(conds *[]api.Condition, typ string) bool {
	n := len(*conds)
	*conds = slices.DeleteFunc(*conds, func(c api.Condition) bool { return c.Type == typ })
	return len(*conds) != n
}

// IsStatusConditionTrue reports whether the condition of type typ is True.
func IsStatusConditionTrue(conds []api.Condition, typ string) bool {
	c := FindStatusCondition(conds, typ)
	return c != nil && c.Status == api.ConditionTrue
}

// IsStatusConditionCurrent reports whether the condition of type typ exists
// and was computed for generation (its observedGeneration is generation).
func IsStatusConditionCurrent(conds []api.Condition, typ string, generation int64) bool {
	c := FindStatusCondition(conds, typ)
	return c != nil && c.ObservedGeneration == generation
}
