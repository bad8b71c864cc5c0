package flowcontrol

import (
	"cmp"
	"slices"
	"strings"
)

// Distinguishers of flows.
const (
	ByUser      = "ByUser"
	ByNamespace = "ByNamespace"
)

// Wildcard matches every value of a rule's field.
const Wildcard = "*"

// FlowSchema is a flowcontrol.apiserver.k8s.io/v1 FlowSchema in the terms
// classification needs.
type FlowSchema struct {
	Name, UID          string
	MatchingPrecedence int32
	// PriorityLevel names the level; a schema whose level does not exist
	// (dangling) matches nothing.
	PriorityLevel string
	// Distinguisher is ByUser, ByNamespace or "" (one flow).
	Distinguisher string
	Rules         []Rule
}

// Rule is one PolicyRulesWithSubjects: it matches a request of one of its
// subjects that one of its resource or non-resource rules matches.
type Rule struct {
	Subjects         []Subject
	ResourceRules    []ResourceRule
	NonResourceRules []NonResourceRule
}

// Subject is a user, a group or a ServiceAccount (Name "*": all of the
// namespace); exactly one of the fields is set.
type Subject struct {
	User, Group    string
	ServiceAccount *ServiceAccount
}

// ServiceAccount names a ServiceAccount subject.
type ServiceAccount struct{ Namespace, Name string }

// ResourceRule matches resource requests; "*" in a list matches everything.
// Resources may name a subresource ("pods/status"). Namespaces match
// namespaced requests ("*": any); ClusterScope matches requests without a
// namespace.
type ResourceRule struct {
	Verbs, APIGroups, Resources, Namespaces []string
	ClusterScope                            bool
}

// NonResourceRule matches non-resource requests; a URL ending in "*" matches
// its prefix.
type NonResourceRule struct {
	Verbs, NonResourceURLs []string
}

// PriorityLevel is a flowcontrol.apiserver.k8s.io/v1
// PriorityLevelConfiguration.
type PriorityLevel struct {
	Name, UID string
	Exempt    bool
	// NominalConcurrencyShares weighs the level's part of the server's limit.
	NominalConcurrencyShares int32
	// LendablePercent of the nominal seats may be lent to other levels;
	// BorrowingLimitPercent of them may be borrowed (nil: no limit).
	LendablePercent, BorrowingLimitPercent *int32
	// Reject: no queues, a request without a seat is rejected at once.
	Reject bool
	// Queues, HandSize and QueueLengthLimit configure a Queue level.
	Queues, HandSize, QueueLengthLimit int32
}

// Config is a set of FlowSchemas and PriorityLevels.
type Config struct {
	FlowSchemas    []FlowSchema
	PriorityLevels []PriorityLevel
}

// Dangling returns the names of the schemas whose level does not exist.
func (c Config) Dangling() map[string]bool {
	levels := make(map[string]bool, len(c.PriorityLevels))
	for _, pl := range c.PriorityLevels {
		levels[pl.Name] = true
	}
	out := map[string]bool{}
	for _, fs := range c.FlowSchemas {
		if !levels[fs.PriorityLevel] {
			out[fs.Name] = true
		}
	}
	return out
}

// sortedSchemas is the schemas in matching order: matchingPrecedence, then
// name.
func sortedSchemas(in []FlowSchema) []FlowSchema {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(a, b FlowSchema) int {
		if c := cmp.Compare(a.MatchingPrecedence, b.MatchingPrecedence); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// nominalLimits divides serverLimit between the levels by their shares:
// ceil(serverLimit * shares / total), at least 1 for a limited level (an
// exempt level's nominal limit counts in the total the levels share).
func nominalLimits(levels []PriorityLevel, serverLimit int) []int {
	total := 0
	for _, pl := range levels {
		total += int(max(pl.NominalConcurrencyShares, 0))
	}
	out := make([]int, len(levels))
	for i, pl := range levels {
		if total > 0 {
			out[i] = (serverLimit*int(max(pl.NominalConcurrencyShares, 0)) + total - 1) / total
		}
		if !pl.Exempt {
			out[i] = max(out[i], 1)
		}
	}
	return out
}
