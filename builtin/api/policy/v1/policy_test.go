package v1

import (
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestValidatePodDisruptionBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec PodDisruptionBudgetSpec
		want string
	}{
		{"min only", PodDisruptionBudgetSpec{MinAvailable: api.Ptr(api.FromInt(1))}, ""},
		{"both", PodDisruptionBudgetSpec{MinAvailable: api.Ptr(api.FromInt(1)), MaxUnavailable: api.Ptr(api.FromString("10%"))},
			"spec: Invalid value: minAvailable and maxUnavailable cannot be both set"},
		{"over 100%", PodDisruptionBudgetSpec{MaxUnavailable: api.Ptr(api.FromString("150%"))},
			"spec.maxUnavailable: Invalid value: 150%: must not be greater than 100%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidatePodDisruptionBudget(&PodDisruptionBudget{Spec: tt.spec}).ToError()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
