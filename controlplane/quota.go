package controlplane

import (
	"github.com/converge-dev/converge/builtin/quota"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// quotaAdmission wraps the admission plugins of either mode with Kubernetes'
// LimitRanger (first among the mutating plugins) and ResourceQuota (last
// among the validating ones, after the webhooks, so that it charges only
// requests every other plugin admitted).
func (cp *ControlPlane) quotaAdmission(mutating []admission.Mutator, validating []admission.Validator) ([]admission.Mutator, []admission.Validator) {
	store := quota.NewServerStore(func() quota.Server {
		if cp.server == nil {
			return nil
		}
		return cp.server
	})
	return mutating, append(validating, quota.NewAdmission(store))
}
