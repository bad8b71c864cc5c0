package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func rl(kv ...string) ResourceList {
	out := ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = api.Quantity{S: kv[i+1]}
	}
	return out
}

func TestValidateResourceQuota(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec ResourceQuotaSpec
		want string // substring of the errors; "" for valid
	}{
		{"valid", ResourceQuotaSpec{Hard: rl("pods", "5", "requests.cpu", "500m", "count/replicasets.apps", "2",
			"requests.example.com/dongle", "3", "gold.storageclass.storage.k8s.io/requests.storage", "10Gi")}, ""},
		{"negative", ResourceQuotaSpec{Hard: rl("cpu", "-1")}, "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"},
		{"fractional count", ResourceQuotaSpec{Hard: rl("pods", "1500m")}, "must be an integer"},
		{"fractional extended", ResourceQuotaSpec{Hard: rl("count/foos.example.com", "0.5")}, "must be an integer"},
		{"unknown name", ResourceQuotaSpec{Hard: rl("bananas", "1")}, "must be a standard resource for quota"},
		{"scope for a resource it cannot limit", ResourceQuotaSpec{Hard: rl("services", "1"), Scopes: []ResourceQuotaScope{ResourceQuotaScopeBestEffort}}, "unsupported scope applied to resource"},
		{"conflicting scopes", ResourceQuotaSpec{Hard: rl("pods", "1"), Scopes: []ResourceQuotaScope{ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating}}, "conflicting scopes"},
		{"unknown scope", ResourceQuotaSpec{Hard: rl("pods", "1"), Scopes: []ResourceQuotaScope{"Sometimes"}}, "unsupported scope"},
		{"In without values", ResourceQuotaSpec{Hard: rl("pods", "1"), ScopeSelector: &ScopeSelector{MatchExpressions: []ScopedResourceSelectorRequirement{
			{ScopeName: ResourceQuotaScopePriorityClass, Operator: ScopeSelectorOpIn}}}}, "must be at least one value"},
		{"BestEffort with In", ResourceQuotaSpec{Hard: rl("pods", "1"), ScopeSelector: &ScopeSelector{MatchExpressions: []ScopedResourceSelectorRequirement{
			{ScopeName: ResourceQuotaScopeBestEffort, Operator: ScopeSelectorOpIn, Values: []string{"x"}}}}}, "must be 'Exists'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateResourceQuota(&ResourceQuota{Spec: tc.spec})
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs.ToError())
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs.ToError().Error(), tc.want) {
				t.Fatalf("errors %v, want one with %q", errs, tc.want)
			}
		})
	}
}

func TestValidateLimitRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		items []LimitRangeItem
		want  string
	}{
		{"valid", []LimitRangeItem{
			{Type: LimitTypeContainer, Min: rl("cpu", "100m"), Max: rl("cpu", "2"), Default: rl("cpu", "500m"), DefaultRequest: rl("cpu", "200m"), MaxLimitRequestRatio: rl("cpu", "4")},
			{Type: LimitTypePod, Max: rl("memory", "1Gi")},
			{Type: LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi")},
		}, ""},
		{"min above max", []LimitRangeItem{{Type: LimitTypeContainer, Min: rl("cpu", "2"), Max: rl("cpu", "1")}}, "min value 2 is greater than max value 1"},
		{"default above max", []LimitRangeItem{{Type: LimitTypeContainer, Max: rl("cpu", "1"), Default: rl("cpu", "2")}}, "default value 2 is greater than max value 1"},
		{"pod defaults", []LimitRangeItem{{Type: LimitTypePod, Default: rl("cpu", "1")}}, "may not be specified when `type` is 'Pod'"},
		{"ratio below 1", []LimitRangeItem{{Type: LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "500m")}}, "ratio 500m is less than 1"},
		{"claim without storage bounds", []LimitRangeItem{{Type: LimitTypePersistentVolumeClaim}}, "either minimum or maximum storage value is required"},
		{"duplicate type", []LimitRangeItem{{Type: LimitTypeContainer}, {Type: LimitTypeContainer}}, "Duplicate value"},
		{"unknown type", []LimitRangeItem{{Type: "Widget"}}, "must be a standard limit type or fully qualified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateLimitRange(&LimitRange{Spec: LimitRangeSpec{Limits: tc.items}})
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs.ToError())
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs.ToError().Error(), tc.want) {
				t.Fatalf("errors %v, want one with %q", errs, tc.want)
			}
		})
	}
}
