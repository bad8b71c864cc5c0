package disruption

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name in builtin/controllers.
const Name = "disruption"

// DeletionTimeout is how long a disruptedPods entry waits for its pod's
// deletion before it no longer counts (Kubernetes' 2 minutes).
const DeletionTimeout = 2 * time.Minute

// Setup adds the controller to mgr.
func Setup(mgr *manager.Manager) error {
	// The workload controllers whose replicas relative budgets count are
	// read from the cache, not watched.
	for _, err := range []error{
		informer[*corev1.ReplicationController](mgr), informer[*appsv1.ReplicaSet](mgr),
		informer[*appsv1.Deployment](mgr), informer[*appsv1.StatefulSet](mgr),
	} {
		if err != nil {
			return fmt.Errorf("disruption: %w", err)
		}
	}
	r := &reconciler{reader: mgr.Reader(), status: mgr.Client().Status(), now: time.Now}
	podToBudgets := func(ctx context.Context, obj api.Object) []reconcile.Request {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil
		}
		pdbs := &policyv1.PodDisruptionBudgetList{}
		if err := r.reader.List(ctx, pdbs, client.InNamespace(pod.Namespace)); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for i := range pdbs.Items {
			sel, err := labels.FromLabelSelector(pdbs.Items[i].Spec.Selector)
			if err == nil && sel.Matches(pod.Labels) {
				reqs = append(reqs, handler.RequestFor(&pdbs.Items[i]))
			}
		}
		return reqs
	}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*policyv1.PodDisruptionBudget]()).
		Watches(builder.Kind[*corev1.Pod](), handler.EnqueueRequestsFromMapFunc(podToBudgets), predicate.ResourceVersionChanged()).
		Complete(r)
	if err != nil {
		return fmt.Errorf("disruption: %w", err)
	}
	return nil
}

func informer[T api.Object](mgr *manager.Manager) error {
	_, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[T]{})
	return err
}

type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

type reconciler struct {
	reader reader
	status client.StatusWriter
	now    func() time.Time
}

// Reconcile brings the status of the budget req names up to date.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := r.reader.Get(ctx, req.ObjectKey, pdb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pdb.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	now := r.now()
	want, requeue, err := r.compute(ctx, pdb, now)
	if err != nil {
		want = failSafe(pdb, err, now)
	}
	if err := r.write(ctx, pdb, want); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// compute returns the budget's status and when an entry of disruptedPods
// expires (0: none).
func (r *reconciler) compute(ctx context.Context, pdb *policyv1.PodDisruptionBudget, now time.Time) (policyv1.PodDisruptionBudgetStatus, time.Duration, error) {
	sel, err := labels.FromLabelSelector(pdb.Spec.Selector)
	if err != nil {
		return policyv1.PodDisruptionBudgetStatus{}, 0, fmt.Errorf("selector: %w", err)
	}
	list := &corev1.PodList{}
	if err := r.reader.List(ctx, list, client.InNamespace(pdb.Namespace)); err != nil {
		return policyv1.PodDisruptionBudgetStatus{}, 0, fmt.Errorf("list pods: %w", err)
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		if sel.Matches(list.Items[i].Labels) {
			pods = append(pods, &list.Items[i])
		}
	}
	expected, desired, err := r.expectedAndDesired(ctx, pdb, pods)
	if err != nil {
		return policyv1.PodDisruptionBudgetStatus{}, 0, err
	}
	disrupted, requeue := liveDisruptions(pdb.Status.DisruptedPods, pods, now)
	var healthy int32
	for _, p := range pods {
		if _, gone := disrupted[p.Name]; p.DeletionTimestamp == nil && !gone && podutil.IsReady(p) {
			healthy++
		}
	}
	allowed := healthy - desired
	if expected <= 0 || allowed < 0 {
		allowed = 0
	}
	st := policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation, DisruptedPods: disrupted, DisruptionsAllowed: allowed,
		CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected,
	}
	cond := api.Condition{Type: policyv1.DisruptionAllowedCondition, Status: api.ConditionFalse, Reason: policyv1.InsufficientPodsReason}
	if allowed > 0 {
		cond.Status, cond.Reason = api.ConditionTrue, policyv1.SufficientPodsReason
	}
	st.Conditions = setCondition(pdb.Status.Conditions, cond, now)
	return st, requeue, nil
}

// expectedAndDesired returns expectedPods and desiredHealthy.
func (r *reconciler) expectedAndDesired(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, err error) {
	minAv, maxUn := pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable
	switch {
	case maxUn != nil:
		if expected, err = r.controllersScale(ctx, pdb.Namespace, pods); err != nil {
			return 0, 0, err
		}
		n, err := scaled(*maxUn, expected)
		if err != nil {
			return 0, 0, err
		}
		return expected, max(expected-n, 0), nil
	case minAv != nil && minAv.Type == api.Int:
		return int32(len(pods)), minAv.IntVal, nil
	case minAv != nil:
		if expected, err = r.controllersScale(ctx, pdb.Namespace, pods); err != nil {
			return 0, 0, err
		}
		n, err := scaled(*minAv, expected)
		return expected, n, err
	}
	return 0, 0, nil
}

// scaled is v (an integer or a percentage of total, rounded up).
func scaled(v api.IntOrString, total int32) (int32, error) {
	if v.Type == api.Int {
		return v.IntVal, nil
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil || !strings.HasSuffix(v.StrVal, "%") {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid value %q: must be an integer or a percentage", v.StrVal)
	}
	return int32(math.Ceil(float64(pct) * float64(total) / 100)), nil
}

// controllersScale sums the replicas of the controllers of pods (each counted
// once).
func (r *reconciler) controllersScale(ctx context.Context, ns string, pods []*corev1.Pod) (int32, error) {
	seen := map[string]bool{}
	var sum int32
	for _, p := range pods {
		ref := controllerutil.GetControllerOf(p)
		if ref == nil {
			return 0, fmt.Errorf("found no controller ref for pod %q", p.Name)
		}
		uid, replicas, err := r.scaleOf(ctx, ns, ref)
		if err != nil {
			return 0, err
		}
		if uid == "" {
			return 0, fmt.Errorf("found no controllers for pod %q", p.Name)
		}
		if !seen[uid] {
			seen[uid] = true
			sum += replicas
		}
	}
	return sum, nil
}

// scaleOf returns the uid and desired replicas of the workload controller
// ref names (a ReplicaSet owned by a Deployment counts as the Deployment);
// an empty uid when there is none.
func (r *reconciler) scaleOf(ctx context.Context, ns string, ref *api.OwnerReference) (string, int32, error) {
	key := client.ObjectKey{Namespace: ns, Name: ref.Name}
	get := func(obj api.Object) (bool, error) {
		err := r.reader.Get(ctx, key, obj)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && string(obj.GetUID()) == string(ref.UID), err
	}
	replicas := func(p *int32) int32 {
		if p == nil {
			return 1
		}
		return *p
	}
	switch group, _, _ := strings.Cut(ref.APIVersion, "/"); {
	case ref.Kind == "ReplicationController" && ref.APIVersion == "v1":
		rc := &corev1.ReplicationController{}
		if ok, err := get(rc); !ok {
			return "", 0, err
		}
		return string(rc.UID), replicas(rc.Spec.Replicas), nil
	case ref.Kind == "ReplicaSet" && group == "apps":
		rs := &appsv1.ReplicaSet{}
		if ok, err := get(rs); !ok {
			return "", 0, err
		}
		if d := controllerutil.GetControllerOf(rs); d != nil && d.Kind == "Deployment" {
			return r.scaleOf(ctx, ns, d)
		}
		return string(rs.UID), replicas(rs.Spec.Replicas), nil
	case ref.Kind == "Deployment" && group == "apps":
		d := &appsv1.Deployment{}
		if ok, err := get(d); !ok {
			return "", 0, err
		}
		return string(d.UID), replicas(d.Spec.Replicas), nil
	case ref.Kind == "StatefulSet" && group == "apps":
		s := &appsv1.StatefulSet{}
		if ok, err := get(s); !ok {
			return "", 0, err
		}
		return string(s.UID), replicas(s.Spec.Replicas), nil
	}
	return "", 0, nil
}

// liveDisruptions keeps the entries of disruptedPods whose pods still exist,
// are not being deleted, and whose deadline has not passed; it also returns
// the time until the earliest kept entry expires.
func liveDisruptions(in map[string]api.Time, pods []*corev1.Pod, now time.Time) (map[string]api.Time, time.Duration) {
	if len(in) == 0 {
		return nil, 0
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	out := map[string]api.Time{}
	var next time.Duration
	for name, at := range in {
		p, ok := byName[name]
		if !ok || p.DeletionTimestamp != nil {
			continue
		}
		left := at.Add(DeletionTimeout).Sub(now)
		if left <= 0 {
			continue
		}
		out[name] = at
		if next == 0 || left < next {
			next = left
		}
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, next
}

// failSafe is the status of a budget whose computation failed.
func failSafe(pdb *policyv1.PodDisruptionBudget, err error, now time.Time) policyv1.PodDisruptionBudgetStatus {
	st := pdb.Status
	st.ObservedGeneration = pdb.Generation
	st.DisruptionsAllowed = 0
	st.Conditions = setCondition(st.Conditions, api.Condition{Type: policyv1.DisruptionAllowedCondition,
		Status: api.ConditionFalse, Reason: policyv1.SyncFailedReason, Message: err.Error()}, now)
	return st
}

// setCondition returns conds with c set; the transition time and the
// observed generation change only when the status does.
func setCondition(conds []api.Condition, c api.Condition, now time.Time) []api.Condition {
	out := slices.Clone(conds)
	for i := range out {
		if out[i].Type == c.Type {
			c.LastTransitionTime = out[i].LastTransitionTime
			if out[i].Status != c.Status {
				c.LastTransitionTime = api.NewTime(now)
			}
			out[i] = c
			return out
		}
	}
	c.LastTransitionTime = api.NewTime(now)
	return append(out, c)
}

func (r *reconciler) write(ctx context.Context, pdb *policyv1.PodDisruptionBudget, want policyv1.PodDisruptionBudgetStatus) error {
	if reflect.DeepEqual(pdb.Status, want) {
		return nil
	}
	pdb.Status = want
	if err := r.status.Update(ctx, pdb); err != nil {
		return fmt.Errorf("update status of PodDisruptionBudget %s/%s: %w", pdb.Namespace, pdb.Name, err)
	}
	return nil
}
