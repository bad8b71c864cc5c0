package v1

import (
	"fmt"

	"github.com/converge-dev/converge/framework/api/field"
)

// ValidateFlowSchema checks a FlowSchema as Kubernetes does: matchingPrecedence
// in [1, 10000], a priority level name, a known distinguisher method, and
// rules each with subjects and at least one resource or non-resource rule.
func ValidateFlowSchema(fs *FlowSchema) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	if mp := fs.Spec.MatchingPrecedence; mp < 1 || mp > 10000 {
		errs = append(errs, field.Invalid(p.Child("matchingPrecedence"), mp, "must be between 1 and 10000, inclusive"))
	}
	if fs.Spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(p.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	if d := fs.Spec.DistinguisherMethod; d != nil && d.Type != FlowDistinguisherMethodByUserType && d.Type != FlowDistinguisherMethodByNamespaceType {
		errs = append(errs, field.NotSupported(p.Child("distinguisherMethod", "type"), string(d.Type),
			[]string{string(FlowDistinguisherMethodByNamespaceType), string(FlowDistinguisherMethodByUserType)}))
	}
	for i, r := range fs.Spec.Rules {
		rp := p.Child("rules").Index(i)
		if len(r.Subjects) == 0 {
			errs = append(errs, field.Required(rp.Child("subjects"), "subjects must contain at least one value"))
		}
		for j, s := range r.Subjects {
			errs = append(errs, validateSubject(s, rp.Child("subjects").Index(j))...)
		}
		if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
			errs = append(errs, field.Required(rp, "at least one of resourceRules and nonResourceRules has to be non-empty"))
		}
		for j, rr := range r.ResourceRules {
			rrp := rp.Child("resourceRules").Index(j)
			for name, l := range map[string][]string{"verbs": rr.Verbs, "apiGroups": rr.APIGroups, "resources": rr.Resources} {
				if len(l) == 0 {
					errs = append(errs, field.Required(rrp.Child(name), name+" must contain at least one value"))
				}
			}
			if len(rr.Namespaces) == 0 && !rr.ClusterScope {
				errs = append(errs, field.Required(rrp.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
			}
		}
		for j, nr := range r.NonResourceRules {
			nrp := rp.Child("nonResourceRules").Index(j)
			if len(nr.Verbs) == 0 {
				errs = append(errs, field.Required(nrp.Child("verbs"), "verbs must contain at least one value"))
			}
			if len(nr.NonResourceURLs) == 0 {
				errs = append(errs, field.Required(nrp.Child("nonResourceURLs"), "nonResourceURLs must contain at least one value"))
			}
		}
	}
	return errs
}

func validateSubject(s Subject, p *field.Path) field.ErrorList {
	switch s.Kind {
	case SubjectKindUser:
		if s.User == nil || s.User.Name == "" {
			return field.ErrorList{field.Required(p.Child("user", "name"), "")}
		}
	case SubjectKindGroup:
		if s.Group == nil || s.Group.Name == "" {
			return field.ErrorList{field.Required(p.Child("group", "name"), "")}
		}
	case SubjectKindServiceAccount:
		if s.ServiceAccount == nil || s.ServiceAccount.Name == "" || s.ServiceAccount.Namespace == "" {
			return field.ErrorList{field.Required(p.Child("serviceAccount"), "name and namespace are required")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("kind"), string(s.Kind),
			[]string{string(SubjectKindGroup), string(SubjectKindServiceAccount), string(SubjectKindUser)})}
	}
	return nil
}

// ValidatePriorityLevelConfiguration checks a level: its type with the
// matching (and only the matching) configuration, non-negative shares,
// percentages in [0, 100], and queuing settings for a queuing level.
func ValidatePriorityLevelConfiguration(pl *PriorityLevelConfiguration) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	percent := func(v *int32, fp *field.Path) {
		if v != nil && (*v < 0 || *v > 100) {
			errs = append(errs, field.Invalid(fp, *v, "must be between 0 and 100, inclusive"))
		}
	}
	switch pl.Spec.Type {
	case PriorityLevelEnablementExempt:
		if pl.Spec.Limited != nil {
			errs = append(errs, field.Forbidden(p.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := pl.Spec.Exempt; e != nil {
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, field.Invalid(p.Child("exempt", "nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			percent(e.LendablePercent, p.Child("exempt", "lendablePercent"))
		}
	case PriorityLevelEnablementLimited:
		if pl.Spec.Exempt != nil {
			errs = append(errs, field.Forbidden(p.Child("exempt"), "must be nil if the type is Limited"))
		}
		l := pl.Spec.Limited
		if l == nil {
			errs = append(errs, field.Required(p.Child("limited"), "must not be empty when type is Limited"))
			break
		}
		lp := p.Child("limited")
		if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
			errs = append(errs, field.Invalid(lp.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
		}
		percent(l.LendablePercent, lp.Child("lendablePercent"))
		if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
			errs = append(errs, field.Invalid(lp.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
		}
		rp := lp.Child("limitResponse")
		switch l.LimitResponse.Type {
		case LimitResponseTypeReject:
			if l.LimitResponse.Queuing != nil {
				errs = append(errs, field.Forbidden(rp.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
			}
		case LimitResponseTypeQueue:
			q := l.LimitResponse.Queuing
			if q == nil {
				errs = append(errs, field.Required(rp.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited"))
				break
			}
			qp := rp.Child("queuing")
			if q.QueueLengthLimit <= 0 {
				errs = append(errs, field.Invalid(qp.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
			}
			if q.Queues <= 0 || q.Queues > 1<<24 {
				errs = append(errs, field.Invalid(qp.Child("queues"), q.Queues, "must be positive"))
			}
			if q.HandSize <= 0 || q.HandSize > q.Queues {
				errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
			}
		default:
			errs = append(errs, field.NotSupported(rp.Child("type"), string(l.LimitResponse.Type),
				[]string{string(LimitResponseTypeQueue), string(LimitResponseTypeReject)}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), string(pl.Spec.Type),
			[]string{string(PriorityLevelEnablementExempt), string(PriorityLevelEnablementLimited)}))
	}
	return errs
}
