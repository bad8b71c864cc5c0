package v1

import (
	"strings"
	"testing"
)

func TestValidateMatchConditions(t *testing.T) {
	url, none := "https://example.com/validate", "None"
	webhook := func(conds ...MatchCondition) ValidatingWebhookConfiguration {
		return ValidatingWebhookConfiguration{Webhooks: []ValidatingWebhook{{
			Name: "v.example.com", ClientConfig: WebhookClientConfig{URL: &url}, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, MatchConditions: conds,
		}}}
	}
	tests := []struct {
		name  string
		conds []MatchCondition
		want  []string // field paths with errors
	}{
		{"valid", []MatchCondition{{Name: "not-system", Expression: `!request.userInfo.username.startsWith("system:")`}}, nil},
		{"duplicate name", []MatchCondition{{Name: "a", Expression: "true"}, {Name: "a", Expression: "true"}},
			[]string{"webhooks[0].matchConditions[1].name"}},
		{"bad name", []MatchCondition{{Name: "Not A Name!", Expression: "true"}}, []string{"webhooks[0].matchConditions[0].name"}},
		{"no expression", []MatchCondition{{Name: "a"}}, []string{"webhooks[0].matchConditions[0].expression"}},
		{"does not compile", []MatchCondition{{Name: "a", Expression: "object.("}}, []string{"webhooks[0].matchConditions[0].expression"}},
	}
	for _, tt := range tests {
		c := webhook(tt.conds...)
		errs := ValidateValidating(&c)
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: errors at %v, want %v (%v)", tt.name, got, tt.want, errs)
		}
	}
}
