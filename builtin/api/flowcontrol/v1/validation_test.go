package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestFlowSchemaDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	rule := PolicyRulesWithSubjects{
		Subjects:         []Subject{{Kind: SubjectKindUser, User: &UserSubject{Name: "u"}}},
		NonResourceRules: []NonResourcePolicyRule{{Verbs: []string{VerbAll}, NonResourceURLs: []string{NonResourceAll}}},
	}
	for _, tc := range []struct {
		name string
		spec FlowSchemaSpec
		want string // "" for valid
	}{
		{"defaulted precedence", FlowSchemaSpec{PriorityLevelConfiguration: PriorityLevelConfigurationReference{Name: "p"}, Rules: []PolicyRulesWithSubjects{rule}}, ""},
		{"precedence too high", FlowSchemaSpec{MatchingPrecedence: 10001, PriorityLevelConfiguration: PriorityLevelConfigurationReference{Name: "p"}}, "spec.matchingPrecedence: Invalid value: 10001"},
		{"no level", FlowSchemaSpec{}, "spec.priorityLevelConfiguration.name: Required value"},
		{"bad distinguisher", FlowSchemaSpec{PriorityLevelConfiguration: PriorityLevelConfigurationReference{Name: "p"},
			DistinguisherMethod: &FlowDistinguisherMethod{Type: "ByColour"}}, `Unsupported value: "ByColour"`},
		{"rule without rules", FlowSchemaSpec{PriorityLevelConfiguration: PriorityLevelConfigurationReference{Name: "p"},
			Rules: []PolicyRulesWithSubjects{{Subjects: rule.Subjects}}}, "at least one of resourceRules and nonResourceRules has to be non-empty"},
		{"user without name", FlowSchemaSpec{PriorityLevelConfiguration: PriorityLevelConfigurationReference{Name: "p"},
			Rules: []PolicyRulesWithSubjects{{Subjects: []Subject{{Kind: SubjectKindUser}}, NonResourceRules: rule.NonResourceRules}}}, "spec.rules[0].subjects[0].user.name: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := &FlowSchema{ObjectMeta: api.ObjectMeta{Name: "fs"}, Spec: tc.spec}
			DefaultFlowSchema(fs)
			check(t, ValidateFlowSchema(fs).ToError(), tc.want)
		})
	}
}

func TestPriorityLevelDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	pl := &PriorityLevelConfiguration{Spec: PriorityLevelConfigurationSpec{Type: PriorityLevelEnablementLimited,
		Limited: &LimitedPriorityLevelConfiguration{LimitResponse: LimitResponse{Type: LimitResponseTypeQueue, Queuing: &QueuingConfiguration{}}}}}
	DefaultPriorityLevelConfiguration(pl)
	if l := pl.Spec.Limited; *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || *l.LimitResponse.Queuing != (QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}) {
		t.Errorf("defaults: %+v %+v", *l, *l.LimitResponse.Queuing)
	}
	check(t, ValidatePriorityLevelConfiguration(pl).ToError(), "")
	for _, tc := range []struct {
		name string
		spec PriorityLevelConfigurationSpec
		want string
	}{
		{"no type", PriorityLevelConfigurationSpec{}, `spec.type: Unsupported value: ""`},
		{"limited without config", PriorityLevelConfigurationSpec{Type: PriorityLevelEnablementLimited}, "spec.limited: Required value"},
		{"exempt with limited", PriorityLevelConfigurationSpec{Type: PriorityLevelEnablementExempt, Limited: &LimitedPriorityLevelConfiguration{}}, "spec.limited: Forbidden"},
		{"hand larger than queues", PriorityLevelConfigurationSpec{Type: PriorityLevelEnablementLimited, Limited: &LimitedPriorityLevelConfiguration{
			LimitResponse: LimitResponse{Type: LimitResponseTypeQueue, Queuing: &QueuingConfiguration{Queues: 2, HandSize: 3, QueueLengthLimit: 1}}}},
			"should not be greater than queues (2)"},
		{"lendable over 100", PriorityLevelConfigurationSpec{Type: PriorityLevelEnablementLimited, Limited: &LimitedPriorityLevelConfiguration{
			LendablePercent: api.Ptr[int32](101), LimitResponse: LimitResponse{Type: LimitResponseTypeReject}}}, "must be between 0 and 100, inclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check(t, ValidatePriorityLevelConfiguration(&PriorityLevelConfiguration{Spec: tc.spec}).ToError(), tc.want)
		})
	}
}

func check(t *testing.T, got error, want string) {
	t.Helper()
	switch {
	case want == "" && got != nil:
		t.Fatalf("unexpected errors: %v", got)
	case want != "" && (got == nil || !strings.Contains(got.Error(), want)):
		t.Fatalf("errors %v, want one containing %q", got, want)
	}
}
