package apiserver

import (
	"context"
	"errors"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// graceAction decides how a DELETE treats cur's grace period: kinds without a
// registry.GracePeriodFunc are deleted at once (finalizers permitting).
func graceAction(ctx context.Context, q *request, cur map[string]any, opts *api.DeleteOptions) (registry.GraceAction, registry.DeletionMark, error) {
	d := q.res.Deletion
	if d == nil || d.GracePeriod == nil {
		return registry.GraceDeleteNow, registry.DeletionMark{}, nil
	}
	meta := metaOf(cur)
	var mark registry.DeletionMark
	if s, _ := meta["deletionTimestamp"].(string); s != "" {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return 0, mark, internalError("parse deletionTimestamp %q: %v", s, err)
		}
		mark.Timestamp = &ts
		if g, ok := api.NestedInt64(cur, "metadata", "deletionGracePeriodSeconds"); ok {
			mark.GracePeriodSeconds = &g
		}
	}
	var grace int64
	if mark.Timestamp == nil {
		var err error
		if grace, err = d.GracePeriod(ctx, cur, opts.GracePeriodSeconds); err != nil {
			var se *apierrors.StatusError
			if errors.As(err, &se) {
				return 0, mark, err
			}
			return 0, mark, internalError("compute the grace period: %v", err)
		}
	}
	action, next := registry.BeforeDelete(mark, grace, opts.GracePeriodSeconds, time.Now())
	return action, next, nil
}

// setDeletionMark writes mark into metadata m.
func setDeletionMark(m map[string]any, mark registry.DeletionMark) {
	m["deletionTimestamp"] = mark.Timestamp.UTC().Format(time.RFC3339)
	m["deletionGracePeriodSeconds"] = *mark.GracePeriodSeconds
}

// deleteDuringUpdate reports whether an update of an object marked for
// deletion removes it: once no finalizer holds it and its grace period (if
// any) was cut to 0, as Kubernetes' shouldDeleteDuringUpdate. A pod's status
// written during its grace period must not delete it.
func deleteDuringUpdate(q *request, obj map[string]any) bool {
	meta := metaOf(obj)
	if meta["deletionTimestamp"] == nil || len(api.NestedSlice(obj, "metadata", "finalizers")) > 0 || pendingDeletion(q, obj) {
		return false
	}
	g, ok := api.NestedInt64(obj, "metadata", "deletionGracePeriodSeconds")
	return !ok || g <= 0
}
