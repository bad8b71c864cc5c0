package resourcequota

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/quota"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// reader reads the watched kinds from the informer cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// quotaClient reads quotas from the server and writes their status
// (client.Client). The quota itself is read from the server, not the cache:
// admission charges status.used without the controller hearing of it (those
// writes are filtered out), so a cached quota may show a usage that already
// equals the recalculated one while the server holds a larger charge.
type quotaClient interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Status() client.StatusWriter
}

// lister lists the objects of a resource counted by count/<resource>.<group>
// that has no typed informer (monitors).
type lister interface {
	List(ctx context.Context, gr api.GroupResource, namespace string) ([]map[string]any, error)
}

// reconciler recalculates one quota.
type reconciler struct {
	reader   reader
	client   quotaClient
	monitors lister
	opts     Options
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// watched are the resources read from the cache, with their list types.
var watched = map[api.GroupResource]func() client.ObjectList{
	{Resource: "pods"}:                   func() client.ObjectList { return &corev1.PodList{} },
	{Resource: "services"}:               func() client.ObjectList { return &corev1.ServiceList{} },
	{Resource: "persistentvolumeclaims"}: func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} },
	{Resource: "configmaps"}:             func() client.ObjectList { return &corev1.ConfigMapList{} },
	{Resource: "secrets"}:                func() client.ObjectList { return &corev1.SecretList{} },
	{Resource: "resourcequotas"}:         func() client.ObjectList { return &corev1.ResourceQuotaList{} },
}

// recountAfterRelease is how soon a quota whose usage went down is counted
// again.
const recountAfterRelease = time.Second

// conflictRetry is how soon a quota whose status write conflicted is
// recalculated.
const conflictRetry = 100 * time.Millisecond

// Reconcile sets status.hard to spec.hard and status.used to the usage of
// the namespace's objects that the quota selects.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	q := &corev1.ResourceQuota{}
	err := r.client.Get(ctx, req.ObjectKey, q)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get resourcequota %s: %w", req.ObjectKey, err)
	}
	used, err := r.usage(ctx, q, time.Now())
	if err != nil {
		return reconcile.Result{}, err
	}
	next := reconcile.Result{RequeueAfter: r.opts.ResyncPeriod}
	if quotaEqual(q.Status.Hard, q.Spec.Hard) && quotaEqual(q.Status.Used, used) {
		return next, nil
	}
	// A recount lower than what the quota holds may be a release, or an
	// object admission charged that the cache (or the store) does not show
	// yet: count again shortly, so such a charge is not lost until the
	// resync (Kubernetes' quota controller waits for its resync).
	if noneLower, _ := quota.LessThanOrEqual(q.Status.Used, used); !noneLower &&
		(next.RequeueAfter == 0 || next.RequeueAfter > recountAfterRelease) {
		next.RequeueAfter = recountAfterRelease
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: q.Spec.Hard, Used: used}
	err = r.client.Status().Update(ctx, q)
	switch {
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil
	case apierrors.IsConflict(err):
		// Admission charged the quota meanwhile: expected, not an error;
		// recalculate from the newer quota shortly.
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("update resourcequota %s status: %w", req.ObjectKey, err)
	}
	return next, nil
}

// usage computes status.used of q: zero for every hard resource some
// evaluator charges, plus the usage of each selected object.
func (r *reconciler) usage(ctx context.Context, q *corev1.ResourceQuota, now time.Time) (corev1.ResourceList, error) {
	hard := quota.Names(q.Spec.Hard)
	used := corev1.ResourceList{}
	for _, gr := range quota.GroupResourcesFor(hard) {
		if quota.Ignored(gr) {
			continue
		}
		e := quota.For(gr)
		matched := e.MatchingResources(hard)
		for _, n := range matched {
			used[n] = api.Quantity{S: "0"}
		}
		objs, err := r.objects(ctx, gr, q.Namespace)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			ok, err := quota.MatchesScopes(e, q, obj)
			if err != nil {
				return nil, fmt.Errorf("match %s against quota %s: %w", gr, q.Name, err)
			}
			if !ok {
				continue
			}
			u, err := e.Usage(obj, now)
			if err != nil {
				return nil, fmt.Errorf("usage of %s: %w", gr, err)
			}
			used = quota.Add(used, quota.Mask(u, matched))
		}
	}
	return used, nil
}

// objects lists the namespace's objects of gr as JSON maps, from the typed
// informers' cache or gr's monitor.
func (r *reconciler) objects(ctx context.Context, gr api.GroupResource, namespace string) ([]map[string]any, error) {
	newList, ok := watched[gr]
	if !ok {
		return r.monitors.List(ctx, gr, namespace)
	}
	l := newList()
	if err := r.reader.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list %s: %w", gr, err)
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", gr, err)
	}
	var items struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("decode %s: %w", gr, err)
	}
	return items.Items, nil
}

// quotaEqual compares resource lists by value, treating nil and empty alike.
func quotaEqual(a, b corev1.ResourceList) bool { return quota.Equals(a, b) }
