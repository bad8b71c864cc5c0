package deployment

import (
	"cmp"
	"context"
	"math"
	"slices"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
)

// scale resizes the active ReplicaSets after the Deployment's replicas
// changed: a single active (or the latest) ReplicaSet takes the new size; a
// saturated new ReplicaSet leaves old ones at zero; during a rolling update
// the difference up to replicas+maxSurge is spread in proportion to each
// ReplicaSet's size, the rounding leftover going to the largest.
func (r *reconciler) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	if rs := findActiveOrLatest(newRS, old); rs != nil {
		if rsReplicas(rs) == replicasOf(d) {
			return nil
		}
		_, err := r.scaleReplicaSet(ctx, d, rs, replicasOf(d))
		return err
	}
	if isSaturated(d, newRS) {
		for _, rs := range activeOnly(old) {
			if _, err := r.scaleReplicaSet(ctx, d, rs, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	all := activeOnly(append(slices.Clone(old), newRS))
	allowed := replicasOf(d)
	if allowed > 0 {
		allowed += MaxSurge(d)
	}
	toAdd := allowed - sumReplicas(all)
	// Larger first; newer first on ties when growing, older first when shrinking.
	slices.SortFunc(all, func(a, b *appsv1.ReplicaSet) int {
		if c := cmp.Compare(rsReplicas(b), rsReplicas(a)); c != 0 {
			return c
		}
		if toAdd > 0 {
			return byCreation(b, a)
		}
		return byCreation(a, b)
	})
	sizes := make([]int32, len(all))
	var added int32
	for i, rs := range all {
		sizes[i] = rsReplicas(rs)
		if toAdd != 0 {
			p := proportion(d, rs, toAdd, added)
			sizes[i] += p
			added += p
		}
	}
	if len(all) > 0 && toAdd != 0 {
		sizes[0] = max(sizes[0]+toAdd-added, 0)
	}
	for i, rs := range all {
		if _, err := r.scaleReplicaSet(ctx, d, rs, sizes[i]); err != nil {
			return err
		}
	}
	return nil
}

// isSaturated: the new ReplicaSet has all the replicas, all available.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	want, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && want == replicasOf(d) && rsReplicas(rs) == replicasOf(d) && rs.Status.AvailableReplicas == replicasOf(d)
}

// proportion is how many replicas rs gains (or loses) of toAdd, given added
// already distributed.
func proportion(d *appsv1.Deployment, rs *appsv1.ReplicaSet, toAdd, added int32) int32 {
	if rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	f := fraction(d, rs)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(f, allowed)
	}
	return max(f, allowed)
}

// fraction is rs's share of the new size: its size scaled by the ratio of the
// new allowed size to the one it was last sized for (max-replicas).
func fraction(d *appsv1.Deployment, rs *appsv1.ReplicaSet) int32 {
	if replicasOf(d) == 0 {
		return -rsReplicas(rs)
	}
	target := replicasOf(d) + MaxSurge(d)
	annotated, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || annotated == 0 {
		annotated = d.Status.Replicas
	}
	if annotated == 0 {
		return 0
	}
	size := float64(rsReplicas(rs)) * float64(target) / float64(annotated)
	return int32(math.Round(size)) - rsReplicas(rs)
}
