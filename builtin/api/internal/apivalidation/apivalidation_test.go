package apivalidation

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestIntOrPercent(t *testing.T) {
	t.Parallel()
	p := field.NewPath("maxSurge")
	tests := []struct {
		v     api.IntOrString
		value int
		want  []string
	}{
		{api.FromInt(3), 3, nil},
		{api.FromString("25%"), 25, nil},
		{api.FromInt(-1), -1, []string{"maxSurge: Invalid value: -1: must be greater than or equal to 0"}},
		{api.FromString("150%"), 150, []string{"maxSurge: Invalid value: 150%: must not be greater than 100%"}},
		{api.FromString("x"), -1, []string{"maxSurge: Invalid value: x: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"}},
	}
	for _, tt := range tests {
		errs := append(ValidatePositiveIntOrPercent(tt.v, p), IsNotMoreThan100Percent(tt.v, p)...)
		if diff := cmp.Diff(tt.want, messages(errs)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.v, diff)
		}
		if got := IntOrPercentValue(tt.v); got != tt.value {
			t.Errorf("IntOrPercentValue(%v) = %d, want %d", tt.v, got, tt.value)
		}
	}
}

func TestValidateLabelSelector(t *testing.T) {
	t.Parallel()
	sel := &api.LabelSelector{
		MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []api.LabelSelectorRequirement{
			{Key: "tier", Operator: api.LabelSelectorOpIn, Values: []string{"a b"}},
			{Key: "env", Operator: api.LabelSelectorOpExists, Values: []string{"x"}},
		},
	}
	want := []string{
		`selector.matchExpressions[0].values[0]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		"selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
	}
	if diff := cmp.Diff(want, messages(ValidateLabelSelector(sel, field.NewPath("selector")))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if errs := ValidateLabelSelector(nil, field.NewPath("selector")); errs != nil {
		t.Errorf("nil selector: %v", errs)
	}
}
