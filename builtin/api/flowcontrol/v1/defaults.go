package v1

import "github.com/converge-dev/converge/framework/api"

// DefaultFlowSchema applies Kubernetes' default: matchingPrecedence 1000.
func DefaultFlowSchema(fs *FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
}

// DefaultPriorityLevelConfiguration applies Kubernetes' defaults: 30
// nominal concurrency shares and 0 lendable percent for a limited level
// (queues 64, hand size 8, queue length limit 50 when it queues), 0 and 0
// for an exempt one.
func DefaultPriorityLevelConfiguration(pl *PriorityLevelConfiguration) {
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = api.Ptr[int32](30)
		}
		if l.LendablePercent == nil {
			l.LendablePercent = api.Ptr[int32](0)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			if q.Queues == 0 {
				q.Queues = 64
			}
			if q.HandSize == 0 {
				q.HandSize = 8
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = 50
			}
		}
	}
	if e := pl.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = api.Ptr[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = api.Ptr[int32](0)
		}
	}
}
