package statefulset

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// reader reads StatefulSets, pods, ControllerRevisions and claims from the
// informer cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer writes pods, claims, ControllerRevisions and StatefulSet status
// (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler reconciles one StatefulSet from the cache. Pods and claims have
// fixed names, so a cache that does not show a creation yet makes the next
// create answer AlreadyExists, which is success, and a deletion it does not
// show yet is sent again, which the server answers as done.
type reconciler struct {
	now    func() time.Time
	reader reader
	client writer
	// revisions finds or creates the current ControllerRevision
	// (client.Client); its Get is the one read from the server: a revision
	// whose create found the name taken.
	revisions history.Writer
	recorder  recorder
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile takes the next steps for one StatefulSet; see the package
// documentation.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	s := &appsv1.StatefulSet{}
	if err := r.reader.Get(ctx, req.ObjectKey, s); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get statefulset %s: %w", req.ObjectKey, err)
	}
	if s.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	sel, err := labels.FromLabelSelector(s.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("statefulset %s selector: %w", req.ObjectKey, err))
	}
	allPods := &corev1.PodList{}
	if err := r.reader.List(ctx, allPods, client.InNamespace(s.Namespace), client.MatchingLabelSelector{Selector: sel}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of statefulset %s: %w", req.ObjectKey, err)
	}
	allCRs := &appsv1.ControllerRevisionList{}
	if err := r.reader.List(ctx, allCRs, client.InNamespace(s.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list revisions of statefulset %s: %w", req.ObjectKey, err)
	}
	var crs []appsv1.ControllerRevision
	for _, cr := range allCRs.Items {
		if controllerutil.IsControlledBy(&cr, s) {
			crs = append(crs, cr)
		}
	}
	var pods []corev1.Pod
	for _, p := range allPods.Items {
		if controllerutil.IsControlledBy(&p, s) {
			pods = append(pods, p)
		}
	}
	oldStatus := s.Status
	updateRev, err := r.ensureRevision(ctx, s, crs)
	if err != nil {
		return reconcile.Result{}, err
	}
	currentRev := s.Status.CurrentRevision
	if currentRev == "" || !slices.ContainsFunc(crs, func(cr appsv1.ControllerRevision) bool { return cr.Name == currentRev }) {
		currentRev = updateRev
	}
	templates := map[string]corev1.PodTemplateSpec{updateRev: s.Spec.Template}
	for i := range crs {
		if crs[i].Name == currentRev && currentRev != updateRev {
			t, err := revisionTemplate(&crs[i])
			if err != nil {
				return reconcile.Result{}, err
			}
			templates[currentRev] = t
		}
	}

	now := r.now()
	requeue, err := r.sync(ctx, s, pods, currentRev, updateRev, templates, now)
	if err != nil {
		return reconcile.Result{}, err
	}

	// Status from the pods as listed (every pod change reconciles again).
	st := computeStatus(s, pods, currentRev, updateRev, now)
	st.CollisionCount, st.Conditions = s.Status.CollisionCount, oldStatus.Conditions
	s.Status = st
	if err := r.cleanupRevisions(ctx, s, crs, pods); err != nil {
		return reconcile.Result{}, err
	}
	if !api.EqualJSON(oldStatus, s.Status) {
		if err := r.client.Status().Update(ctx, s); err != nil {
			return reconcile.Result{}, fmt.Errorf("update status of statefulset %s: %w", req.ObjectKey, err)
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// sync creates, deletes and updates pods: at most one step at a time for
// OrderedReady.
func (r *reconciler) sync(ctx context.Context, s *appsv1.StatefulSet, pods []corev1.Pod, currentRev, updateRev string,
	templates map[string]corev1.PodTemplateSpec, now time.Time) (time.Duration, error) {
	start := 0
	if s.Spec.Ordinals != nil {
		start = int(s.Spec.Ordinals.Start)
	}
	replicas := 1
	if s.Spec.Replicas != nil {
		replicas = int(*s.Spec.Replicas)
	}
	parallel := s.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	byOrdinal := map[int]*corev1.Pod{}
	var condemned []*corev1.Pod
	for i := range pods {
		ord, ok := ordinalOf(s, &pods[i])
		if !ok {
			continue
		}
		if ord >= start && ord < start+replicas {
			byOrdinal[ord] = &pods[i]
		} else {
			condemned = append(condemned, &pods[i])
		}
	}
	slices.SortFunc(condemned, func(a, b *corev1.Pod) int {
		oa, _ := ordinalOf(s, a)
		ob, _ := ordinalOf(s, b)
		return ob - oa
	})

	// A spec change (the retention policy, a scale-up) may change who owns
	// the claims of the ordinals in range.
	if len(s.Spec.VolumeClaimTemplates) > 0 && s.Status.ObservedGeneration != s.Generation {
		for ord := start; ord < start+replicas; ord++ {
			if pod := byOrdinal[ord]; pod != nil && pod.DeletionTimestamp == nil {
				if err := r.syncClaimOwners(ctx, s, ord, pod, false); err != nil {
					return 0, err
				}
			}
		}
	}

	// Replicas in ascending order.
	for ord := start; ord < start+replicas; ord++ {
		pod := byOrdinal[ord]
		switch {
		case pod == nil:
			rev := revisionFor(s, ord, start, currentRev, updateRev)
			if err := r.createOrdinal(ctx, s, ord, rev, templates[rev]); err != nil {
				return 0, err
			}
			if !parallel {
				return 0, nil
			}
		case pod.DeletionTimestamp != nil:
			if !parallel {
				return 0, nil // wait until it is gone
			}
		case pod.Status.Phase == corev1.PodFailed:
			if err := r.removePod(ctx, s, pod); err != nil {
				return 0, err
			}
			if !parallel {
				return 0, nil
			}
		case !parallel && !runningAndReady(pod):
			return 0, nil // OrderedReady: wait for this one
		case !parallel:
			// OrderedReady: and until it is available (minReadySeconds).
			if ok, wait := isAvailable(pod, s.Spec.MinReadySeconds, now); !ok {
				return wait, nil
			}
		}
	}

	// Scale down, highest ordinal first; the claims of a removed pod follow
	// the retention policy before it goes. OrderedReady removes an unhealthy
	// pod only when it is the first unhealthy one (replicas in ascending
	// order, then the condemned ones in ascending order), as Kubernetes
	// does: a scale-down halts while a higher pod is unhealthy.
	firstUnhealthy := firstUnhealthyPod(byOrdinal, start, replicas, condemned)
	for _, pod := range condemned {
		if !parallel && pod.DeletionTimestamp == nil && pod != firstUnhealthy {
			if !runningAndReady(pod) {
				return 0, nil
			}
			if ok, wait := isAvailable(pod, s.Spec.MinReadySeconds, now); !ok {
				return wait, nil
			}
		}
		if pod.DeletionTimestamp == nil {
			ord, _ := ordinalOf(s, pod)
			if err := r.syncClaimOwners(ctx, s, ord, pod, true); err != nil {
				return 0, err
			}
			if err := r.removePod(ctx, s, pod); err != nil {
				return 0, err
			}
		}
		if !parallel {
			return 0, nil
		}
	}
	if len(condemned) > 0 {
		return 0, nil
	}

	// Rolling update from the highest ordinal down to the partition, at most
	// maxUnavailable replicas unavailable at a time (1 by default: one pod at
	// a time, only while every replica is running and available).
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return 0, nil
	}
	return r.rollingUpdate(ctx, s, byOrdinal, start, replicas, updateRev, now)
}

// rollingUpdate deletes pods of an old revision, highest ordinal first and
// not below the partition, while fewer than maxUnavailable replicas are
// unavailable (missing, terminating, not running and ready, or ready for less
// than minReadySeconds); it returns when a pod becomes available.
func (r *reconciler) rollingUpdate(ctx context.Context, s *appsv1.StatefulSet, byOrdinal map[int]*corev1.Pod,
	start, replicas int, updateRev string, now time.Time) (time.Duration, error) {
	var requeue time.Duration
	unavailable := 0
	for ord := start; ord < start+replicas; ord++ {
		pod := byOrdinal[ord]
		if pod == nil || pod.DeletionTimestamp != nil || !runningAndReady(pod) {
			unavailable++
			continue
		}
		if ok, wait := isAvailable(pod, s.Spec.MinReadySeconds, now); !ok {
			unavailable++
			requeue = max(requeue, wait)
		}
	}
	budget := maxUnavailable(s, replicas) - unavailable
	if budget <= 0 {
		return requeue, nil
	}
	partition := 0
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = int(*ru.Partition)
	}
	for ord := start + replicas - 1; ord >= start+partition && budget > 0; ord-- {
		pod := byOrdinal[ord]
		if pod == nil || pod.DeletionTimestamp != nil || pod.Labels[appsv1.StatefulSetRevisionLabel] == updateRev {
			continue
		}
		if err := r.removePod(ctx, s, pod); err != nil {
			return 0, err
		}
		budget--
	}
	return requeue, nil
}

// maxUnavailable resolves spec.updateStrategy.rollingUpdate.maxUnavailable
// against replicas (percentages round up), at least 1.
func maxUnavailable(s *appsv1.StatefulSet, replicas int) int {
	ru := s.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.MaxUnavailable == nil {
		return 1
	}
	v := *ru.MaxUnavailable
	n := int(v.IntVal)
	if v.Type != api.Int {
		pct, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		if err != nil {
			return 1
		}
		n = (pct*replicas + 99) / 100
	}
	return max(n, 1)
}

// revisionFor says which revision a (re)created pod gets: below the
// partition the current one, else the update one.
func revisionFor(s *appsv1.StatefulSet, ord, start int, currentRev, updateRev string) string {
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return updateRev
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && ord < start+int(*ru.Partition) {
		return currentRev
	}
	return updateRev
}

func (r *reconciler) removePod(ctx context.Context, s *appsv1.StatefulSet, pod *corev1.Pod) error {
	// The UID precondition keeps a pod of the same name created since from
	// being deleted; NotFound or a Conflict means the pod read is gone.
	err := r.client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		r.recorder.Event(ctx, s, record.Warning, "FailedDelete", fmt.Sprintf("delete Pod %s in StatefulSet %s failed error: %v", pod.Name, s.Name, err))
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	r.recorder.Event(ctx, s, record.Normal, "SuccessfulDelete", fmt.Sprintf("delete Pod %s in StatefulSet %s successful", pod.Name, s.Name))
	return nil
}

// ordinalOf parses "<set>-<ordinal>".
func ordinalOf(s *appsv1.StatefulSet, p *corev1.Pod) (int, bool) {
	rest, ok := strings.CutPrefix(p.Name, s.Name+"-")
	if !ok {
		return 0, false
	}
	ord, err := strconv.Atoi(rest)
	if err != nil || ord < 0 || strconv.Itoa(ord) != rest {
		return 0, false
	}
	return ord, true
}

// firstUnhealthyPod is the first pod that is not running and ready or is
// being deleted: among the replicas in ascending ordinal order, then among
// the condemned (sorted descending) from the lowest ordinal up; nil if all
// are healthy.
func firstUnhealthyPod(byOrdinal map[int]*corev1.Pod, start, replicas int, condemned []*corev1.Pod) *corev1.Pod {
	healthy := func(p *corev1.Pod) bool { return p.DeletionTimestamp == nil && runningAndReady(p) }
	for ord := start; ord < start+replicas; ord++ {
		if p := byOrdinal[ord]; p != nil && !healthy(p) {
			return p
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if !healthy(condemned[i]) {
			return condemned[i]
		}
	}
	return nil
}

func runningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && isReady(p)
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// isAvailable reports whether p is ready for minReadySeconds, and otherwise
// how long until it would be (0 when not ready).
func isAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) (bool, time.Duration) {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status != corev1.ConditionTrue {
			return false, 0
		}
		at := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second)
		if minReadySeconds == 0 || !now.Before(at) {
			return true, 0
		}
		return false, at.Sub(now)
	}
	return false, 0
}

func computeStatus(s *appsv1.StatefulSet, pods []corev1.Pod, currentRev, updateRev string, now time.Time) appsv1.StatefulSetStatus {
	st := appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, CurrentRevision: currentRev, UpdateRevision: updateRev}
	// As in Kubernetes, terminating pods still count as replicas (and ready
	// ones as ready) until they are gone, but never as current or updated.
	for i := range pods {
		p := &pods[i]
		if _, ok := ordinalOf(s, p); !ok {
			continue
		}
		st.Replicas++
		if runningAndReady(p) {
			st.ReadyReplicas++
			if ok, _ := isAvailable(p, s.Spec.MinReadySeconds, now); ok {
				st.AvailableReplicas++
			}
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Labels[appsv1.StatefulSetRevisionLabel] == currentRev {
			st.CurrentReplicas++
		}
		if p.Labels[appsv1.StatefulSetRevisionLabel] == updateRev {
			st.UpdatedReplicas++
		}
	}
	replicas := int32(1)
	if s.Spec.Replicas != nil {
		replicas = *s.Spec.Replicas
	}
	// The update is complete: the update revision becomes current.
	if st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas && st.Replicas == replicas {
		st.CurrentRevision, st.CurrentReplicas = updateRev, st.UpdatedReplicas
	}
	return st
}

func controllerRef(s *appsv1.StatefulSet) api.OwnerReference {
	return controllerutil.NewControllerRef(s, appsv1.GroupVersion.WithKind("StatefulSet"))
}
