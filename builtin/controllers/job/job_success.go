package job

import (
	"fmt"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
)

// matchSuccessPolicy returns, for an Indexed Job, the message of the first
// success policy rule its completed indexes satisfy: all of succeededIndexes
// completed, or at least succeededCount of them (of all indexes without
// succeededIndexes).
func matchSuccessPolicy(sp *batchv1.SuccessPolicy, completionCount int, completed indexSet) (string, bool) {
	if sp == nil {
		return "", false
	}
	for i, rule := range sp.Rules {
		if rule.SucceededIndexes != nil {
			required := parseIndexSet(*rule.SucceededIndexes, completionCount)
			matched := 0
			for ix := range required {
				if completed.Has(ix) {
					matched++
				}
			}
			if rule.SucceededCount == nil && matched == required.Len() && required.Len() > 0 ||
				rule.SucceededCount != nil && matched >= int(*rule.SucceededCount) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
			continue
		}
		if rule.SucceededCount != nil && completed.Len() >= int(*rule.SucceededCount) {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}
