package replicaset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
)

// calculateStatus returns rs's status for its claimed active pods and, when a
// ready pod is not yet available, how long until the next one is.
func calculateStatus(rs *appsv1.ReplicaSet, pods []*corev1.Pod, manageErr error, now time.Time) (appsv1.ReplicaSetStatus, time.Duration) {
	st := rs.Status
	st.Conditions = slices.Clone(rs.Status.Conditions)
	st.Replicas = int32(len(pods))
	st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	tmpl := labels.SelectorFromSet(rs.Spec.Template.Labels)
	var wait time.Duration
	for _, p := range pods {
		if tmpl.Matches(p.Labels) {
			st.FullyLabeledReplicas++
		}
		if !podutil.IsReady(p) {
			continue
		}
		st.ReadyReplicas++
		ok, w := podutil.AvailableIn(p, rs.Spec.MinReadySeconds, now)
		if ok {
			st.AvailableReplicas++
		} else if w > 0 && (wait == 0 || w < wait) {
			wait = w
		}
	}
	st.ObservedGeneration = rs.Generation

	i := slices.IndexFunc(st.Conditions, func(c appsv1.ReplicaSetCondition) bool { return c.Type == appsv1.ReplicaSetReplicaFailure })
	switch {
	case manageErr != nil && i < 0:
		reason := "FailedCreate"
		if errors.Is(manageErr, errDelete) {
			reason = "FailedDelete"
		}
		st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: api.NewTime(now.UTC().Truncate(time.Second)), Reason: reason, Message: rootMessage(manageErr),
		})
	case manageErr == nil && i >= 0:
		st.Conditions = slices.Delete(st.Conditions, i, i+1)
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	return st, wait
}

// rootMessage is the message of the innermost API error in err, else err's.
func rootMessage(err error) string {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// writeStatus writes st when it differs from rs.Status, retrying once on a
// conflict with the live object.
func (r *reconciler) writeStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	if reflect.DeepEqual(rs.Status, st) {
		return nil
	}
	rs.Status = st
	err := r.client.Status().Update(ctx, rs)
	if apierrors.IsConflict(err) {
		live := &appsv1.ReplicaSet{}
		gerr := r.live.Get(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: rs.Name}, live)
		if gerr != nil {
			return fmt.Errorf("update status of replicaset %s/%s: %w", rs.Namespace, rs.Name, gerr)
		}
		if live.UID != rs.UID {
			return nil
		}
		live.Status = st
		err = r.client.Status().Update(ctx, live)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update status of replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return nil
}
