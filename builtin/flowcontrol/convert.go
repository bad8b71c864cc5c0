package flowcontrol

import (
	flowcontrolv1 "github.com/converge-dev/converge/builtin/api/flowcontrol/v1"
	"github.com/converge-dev/converge/framework/apiserver/flowcontrol"
)

// Config converts stored objects into the filter's configuration (defaults
// applied first, as the server stores them).
func Config(schemas []flowcontrolv1.FlowSchema, levels []flowcontrolv1.PriorityLevelConfiguration) flowcontrol.Config {
	var cfg flowcontrol.Config
	for i := range levels {
		pl := levels[i]
		flowcontrolv1.DefaultPriorityLevelConfiguration(&pl)
		cfg.PriorityLevels = append(cfg.PriorityLevels, priorityLevel(&pl))
	}
	for i := range schemas {
		fs := schemas[i]
		flowcontrolv1.DefaultFlowSchema(&fs)
		cfg.FlowSchemas = append(cfg.FlowSchemas, flowSchema(&fs))
	}
	return cfg
}

// DefaultConfig is the configuration of the mandatory and suggested objects,
// enforced until the stored ones are read.
func DefaultConfig() flowcontrol.Config {
	var schemas []flowcontrolv1.FlowSchema
	for _, fs := range append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		schemas = append(schemas, *fs)
	}
	var levels []flowcontrolv1.PriorityLevelConfiguration
	for _, pl := range append(MandatoryPriorityLevels(), SuggestedPriorityLevels()...) {
		levels = append(levels, *pl)
	}
	return Config(schemas, levels)
}

func priorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) flowcontrol.PriorityLevel {
	out := flowcontrol.PriorityLevel{Name: pl.Name, UID: pl.UID}
	switch {
	case pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt:
		out.Exempt = true
		if e := pl.Spec.Exempt; e != nil {
			out.NominalConcurrencyShares = deref(e.NominalConcurrencyShares)
			out.LendablePercent = e.LendablePercent
		}
	case pl.Spec.Limited != nil:
		l := pl.Spec.Limited
		out.NominalConcurrencyShares = deref(l.NominalConcurrencyShares)
		out.LendablePercent, out.BorrowingLimitPercent = l.LendablePercent, l.BorrowingLimitPercent
		if q := l.LimitResponse.Queuing; l.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue && q != nil {
			out.Queues, out.HandSize, out.QueueLengthLimit = q.Queues, q.HandSize, q.QueueLengthLimit
		} else {
			out.Reject = true
		}
	default:
		out.Reject = true
	}
	return out
}

func flowSchema(fs *flowcontrolv1.FlowSchema) flowcontrol.FlowSchema {
	out := flowcontrol.FlowSchema{Name: fs.Name, UID: fs.UID, MatchingPrecedence: fs.Spec.MatchingPrecedence,
		PriorityLevel: fs.Spec.PriorityLevelConfiguration.Name}
	if m := fs.Spec.DistinguisherMethod; m != nil {
		out.Distinguisher = string(m.Type)
	}
	for _, r := range fs.Spec.Rules {
		rule := flowcontrol.Rule{}
		for _, s := range r.Subjects {
			switch {
			case s.Kind == flowcontrolv1.SubjectKindUser && s.User != nil:
				rule.Subjects = append(rule.Subjects, flowcontrol.Subject{User: s.User.Name})
			case s.Kind == flowcontrolv1.SubjectKindGroup && s.Group != nil:
				rule.Subjects = append(rule.Subjects, flowcontrol.Subject{Group: s.Group.Name})
			case s.Kind == flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil:
				rule.Subjects = append(rule.Subjects, flowcontrol.Subject{ServiceAccount: &flowcontrol.ServiceAccount{
					Namespace: s.ServiceAccount.Namespace, Name: s.ServiceAccount.Name}})
			}
		}
		for _, rr := range r.ResourceRules {
			rule.ResourceRules = append(rule.ResourceRules, flowcontrol.ResourceRule{Verbs: rr.Verbs, APIGroups: rr.APIGroups,
				Resources: rr.Resources, Namespaces: rr.Namespaces, ClusterScope: rr.ClusterScope})
		}
		for _, nr := range r.NonResourceRules {
			rule.NonResourceRules = append(rule.NonResourceRules, flowcontrol.NonResourceRule{Verbs: nr.Verbs, NonResourceURLs: nr.NonResourceURLs})
		}
		out.Rules = append(out.Rules, rule)
	}
	return out
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
