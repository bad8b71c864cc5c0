package registry

import (
	"context"
	"time"
)

// GracePeriodFunc returns the grace period, in seconds, of a DELETE of obj (its
// stored state) that is not yet being deleted. requested is the request's
// gracePeriodSeconds (DeleteOptions body or query), nil when the request gives
// none. It plays the part of Kubernetes' RESTGracefulDeleteStrategy: a positive
// grace marks obj (metadata.deletionTimestamp = now + grace,
// metadata.deletionGracePeriodSeconds = grace) and keeps it until a later
// DELETE with a grace of 0 (the node agent's, once the pod's containers
// stopped); 0 deletes it at once, finalizers permitting. An error fails the
// request (API errors are returned as they are, others as 500).
type GracePeriodFunc func(ctx context.Context, obj map[string]any, requested *int64) (int64, error)

// DeletionMark is the deletion metadata of an object.
type DeletionMark struct {
	// Timestamp is metadata.deletionTimestamp; nil when not being deleted.
	Timestamp *time.Time
	// GracePeriodSeconds is metadata.deletionGracePeriodSeconds.
	GracePeriodSeconds *int64
}

// GraceAction is what a DELETE does to a gracefully deleted kind's object.
type GraceAction int

const (
	// GraceDeleteNow deletes the object at once, or, while finalizers remain,
	// marks it with a grace period of 0 (plain finalizer semantics).
	GraceDeleteNow GraceAction = iota
	// GraceMark stores the returned mark: the first graceful DELETE, or one
	// that shortens a pending grace period. A mark with a grace period of 0
	// deletes the object at once unless finalizers remain.
	GraceMark
	// GracePending leaves the object alone: a graceful deletion that ends no
	// later than the one asked for is already under way.
	GracePending
)

// BeforeDelete decides, like Kubernetes' rest.BeforeDelete, what a DELETE does
// to an object whose current deletion metadata is cur. grace is the grace
// period the kind's GracePeriodFunc computed (used only when cur is not being
// deleted); requested is the request's gracePeriodSeconds. A grace period may
// only be shortened: a second DELETE with a longer (or no) grace changes
// nothing. Negative values count as 1 second, as in Kubernetes.
func BeforeDelete(cur DeletionMark, grace int64, requested *int64, now time.Time) (GraceAction, DeletionMark) {
	if requested != nil && *requested < 0 {
		one := int64(1)
		requested = &one
	}
	if cur.Timestamp != nil {
		old := cur.GracePeriodSeconds
		if old == nil || *old <= 0 {
			// Marked without grace (finalizers), or a grace already cut to 0
			// whose delete did not happen: delete now.
			return GraceDeleteNow, cur
		}
		if requested == nil || *requested >= *old {
			return GracePending, cur
		}
		// The deletion started at Timestamp - old; it now ends requested
		// seconds after that.
		ts := cur.Timestamp.Add(-time.Duration(*old) * time.Second).Add(time.Duration(*requested) * time.Second)
		if ts.After(now) && *requested == 0 {
			ts = now
		}
		g := *requested
		return GraceMark, DeletionMark{Timestamp: &ts, GracePeriodSeconds: &g}
	}
	if grace < 0 {
		grace = 1
	}
	if grace == 0 {
		return GraceDeleteNow, cur
	}
	ts := now.Add(time.Duration(grace) * time.Second)
	return GraceMark, DeletionMark{Timestamp: &ts, GracePeriodSeconds: &grace}
}
