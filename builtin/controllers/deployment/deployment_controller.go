package deployment

import (
	"context"
	"fmt"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "deployment"

// Workers is the number of concurrent reconciles.
const Workers = 5

// Reconciler reconciles Deployments. Its dependencies are functions so unit
// tests can stub them; Setup wires them to the manager's caches and client.
type Reconciler struct {
	// GetDeployment reads a Deployment from the cache (nil when absent).
	GetDeployment func(key client.ObjectKey) *appsv1.Deployment
	// GetLiveDeployment reads a Deployment from the API server.
	GetLiveDeployment func(ctx context.Context, key client.ObjectKey) (*appsv1.Deployment, error)
	// ListReplicaSets and ListPods list a namespace's cached objects.
	ListReplicaSets func(namespace string) []*appsv1.ReplicaSet
	ListPods        func(namespace string) []*corev1.Pod
	// GetLiveReplicaSet reads a ReplicaSet from the API server.
	GetLiveReplicaSet func(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error)
	// CreateReplicaSet, UpdateReplicaSet and DeleteReplicaSet write
	// ReplicaSets; Create and Update replace rs with the server's answer.
	CreateReplicaSet func(ctx context.Context, rs *appsv1.ReplicaSet) error
	UpdateReplicaSet func(ctx context.Context, rs *appsv1.ReplicaSet) error
	DeleteReplicaSet func(ctx context.Context, rs *appsv1.ReplicaSet) error
	// SetReplicaSetOwners replaces rs's ownerReferences (optimistic lock).
	SetReplicaSetOwners func(ctx context.Context, rs *appsv1.ReplicaSet, refs []api.OwnerReference) error
	// SetRevision sets the Deployment's revision annotation (optimistic lock)
	// and replaces d with the server's answer.
	SetRevision func(ctx context.Context, d *appsv1.Deployment, revision string) error
	// UpdateStatus writes d.Status and replaces d with the server's answer.
	UpdateStatus func(ctx context.Context, d *appsv1.Deployment) error
	// Event records an event about obj.
	Event func(ctx context.Context, obj api.Object, eventType, reason, message string)
	// Now is the clock.
	Now func() time.Time
}

// Setup adds the Deployment controller to mgr.
func Setup(mgr *manager.Manager) error {
	dInf, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*appsv1.Deployment]{})
	if err != nil {
		return fmt.Errorf("deployment informer: %w", err)
	}
	rsInf, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*appsv1.ReplicaSet]{})
	if err != nil {
		return fmt.Errorf("replicaset informer: %w", err)
	}
	podInf, err := cache.InformerFor(mgr.Informers(), cache.InformerOptions[*corev1.Pod]{})
	if err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	c := mgr.Client()
	rec := mgr.EventRecorder(Name + "-controller")
	r := &Reconciler{
		GetDeployment: func(key client.ObjectKey) *appsv1.Deployment {
			d, _ := dInf.Store().Get(key.Namespace + "/" + key.Name)
			return d
		},
		GetLiveDeployment: func(ctx context.Context, key client.ObjectKey) (*appsv1.Deployment, error) {
			d := &appsv1.Deployment{}
			return d, c.Get(ctx, key, d)
		},
		ListReplicaSets: func(ns string) []*appsv1.ReplicaSet {
			l, _ := rsInf.Store().ByIndex(cache.NamespaceIndex, ns)
			return l
		},
		ListPods: func(ns string) []*corev1.Pod {
			l, _ := podInf.Store().ByIndex(cache.NamespaceIndex, ns)
			return l
		},
		GetLiveReplicaSet: func(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error) {
			rs := &appsv1.ReplicaSet{}
			return rs, c.Get(ctx, key, rs)
		},
		CreateReplicaSet: func(ctx context.Context, rs *appsv1.ReplicaSet) error { return c.Create(ctx, rs) },
		UpdateReplicaSet: func(ctx context.Context, rs *appsv1.ReplicaSet) error { return c.Update(ctx, rs) },
		DeleteReplicaSet: func(ctx context.Context, rs *appsv1.ReplicaSet) error {
			return c.Delete(ctx, rs, client.Preconditions{UID: api.Ptr(string(rs.UID)), ResourceVersion: api.Ptr(rs.ResourceVersion)})
		},
		SetReplicaSetOwners: func(ctx context.Context, rs *appsv1.ReplicaSet, refs []api.OwnerReference) error {
			orig := &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: rs.Name, Namespace: rs.Namespace,
				ResourceVersion: rs.ResourceVersion, OwnerReferences: rs.OwnerReferences}}
			mod := &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: rs.Name, Namespace: rs.Namespace,
				ResourceVersion: rs.ResourceVersion, OwnerReferences: refs}}
			return c.Patch(ctx, mod, client.MergeFromWithOptimisticLock(orig))
		},
		SetRevision: func(ctx context.Context, d *appsv1.Deployment, revision string) error {
			patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, d.ResourceVersion, RevisionAnnotation, revision)
			return c.Patch(ctx, d, client.RawPatch(client.MergePatchType, patch))
		},
		UpdateStatus: func(ctx context.Context, d *appsv1.Deployment) error { return c.Status().Update(ctx, d) },
		Event:        rec.Event,
		Now:          time.Now,
	}

	// Orphan ReplicaSets wake the Deployments that could adopt them.
	orphanRS := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj api.Object) []reconcile.Request {
		rs, ok := obj.(*appsv1.ReplicaSet)
		if !ok || controllerutil.GetControllerOf(rs) != nil {
			return nil
		}
		ds, _ := dInf.Store().ByIndex(cache.NamespaceIndex, rs.Namespace)
		var out []reconcile.Request
		for _, d := range ds {
			sel, err := labels.FromLabelSelector(d.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(rs.Labels) {
				continue
			}
			out = append(out, reconcile.Request{ObjectKey: client.ObjectKey{Namespace: d.Namespace, Name: d.Name}})
		}
		return out
	})
	// Deleted pods wake their Deployment (Recreate waits for old pods to go).
	podGone := handler.Func(func(_ context.Context, ev handler.Event, q handler.Queue) {
		if ev.Type != cache.Deleted {
			return
		}
		ref := controllerutil.GetControllerOf(ev.Object)
		if ref == nil || ref.Kind != "ReplicaSet" {
			return
		}
		rs, ok := rsInf.Store().Get(ev.Object.GetNamespace() + "/" + ref.Name)
		if !ok {
			return
		}
		if dref := controllerutil.GetControllerOf(rs); dref != nil && dref.Kind == "Deployment" {
			q.Add(reconcile.Request{ObjectKey: client.ObjectKey{Namespace: rs.Namespace, Name: dref.Name}})
		}
	})
	err = builder.ControllerManagedBy(mgr).Named(Name).
		For(builder.Kind[*appsv1.Deployment]()).
		Owns(builder.Kind[*appsv1.ReplicaSet]()).
		Watches(builder.Kind[*appsv1.ReplicaSet](), orphanRS).
		Watches(builder.Kind[*corev1.Pod](), podGone).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build deployment controller: %w", err)
	}
	return nil
}
