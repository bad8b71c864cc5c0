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

// deploymentLister, replicaSetLister and podLister read the cache without
// copies (cache.Lister): the objects are shared, the reconciler clones what it
// changes. A reconcile reads every ReplicaSet and pod of the namespace, which
// copies would make cost more than the rest of it.
type deploymentLister interface {
	Get(ctx context.Context, key client.ObjectKey) (*appsv1.Deployment, error)
	List(ctx context.Context, opts ...client.ListOption) ([]*appsv1.Deployment, error)
}

type replicaSetLister interface {
	Get(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error)
	List(ctx context.Context, opts ...client.ListOption) ([]*appsv1.ReplicaSet, error)
}

type podLister interface {
	List(ctx context.Context, opts ...client.ListOption) ([]*corev1.Pod, error)
}

// writer writes ReplicaSets and the Deployment's revision (client.Client);
// Create, Update and Patch replace the object with the server's answer.
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Patch(ctx context.Context, obj api.Object, patch client.Patch, opts ...client.PatchOption) error
}

// liveReader reads from the server (client.Client): the Deployment before it
// adopts ReplicaSets (the cache may not show it being deleted yet), and a
// ReplicaSet whose create found the name taken.
type liveReader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler reconciles Deployments.
type reconciler struct {
	deployments deploymentLister
	replicaSets replicaSetLister
	pods        podLister
	client      writer
	// status writes the Deployment's status subresource and replaces it
	// with the server's answer (client.Client.Status()).
	status   client.StatusWriter
	live     liveReader
	recorder recorder
	now      func() time.Time
}

// deleteReplicaSet deletes rs if it is still the version read.
func (r *reconciler) deleteReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet) error {
	return r.client.Delete(ctx, rs, client.Preconditions{UID: api.Ptr(string(rs.UID)), ResourceVersion: api.Ptr(rs.ResourceVersion)})
}

// setReplicaSetOwners replaces rs's ownerReferences (optimistic lock).
func (r *reconciler) setReplicaSetOwners(ctx context.Context, rs *appsv1.ReplicaSet, refs []api.OwnerReference) error {
	p, err := controllerutil.OwnerReferencesPatch(rs.ResourceVersion, refs)
	if err != nil {
		return err
	}
	// A new object receives the answer: rs is the cache's.
	return r.client.Patch(ctx, &appsv1.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: rs.Name, Namespace: rs.Namespace}}, p)
}

// setRevision sets the Deployment's revision annotation (optimistic lock) and
// replaces d with the server's answer.
func (r *reconciler) setRevision(ctx context.Context, d *appsv1.Deployment, revision string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, d.ResourceVersion, RevisionAnnotation, revision)
	return r.client.Patch(ctx, d, client.RawPatch(client.MergePatchType, patch))
}

// Setup adds the Deployment controller to mgr.
func Setup(mgr *manager.Manager) error {
	dLister, err := cache.ListerFor[*appsv1.Deployment](mgr.Informers())
	if err != nil {
		return fmt.Errorf("deployment lister: %w", err)
	}
	rsLister, err := cache.ListerFor[*appsv1.ReplicaSet](mgr.Informers())
	if err != nil {
		return fmt.Errorf("replicaset lister: %w", err)
	}
	podLister, err := cache.ListerFor[*corev1.Pod](mgr.Informers())
	if err != nil {
		return fmt.Errorf("pod lister: %w", err)
	}
	c := mgr.Client()
	r := &reconciler{
		deployments: dLister,
		replicaSets: rsLister,
		pods:        podLister,
		client:      c,
		status:      c.Status(),
		live:        c,
		recorder:    mgr.EventRecorder(Name + "-controller"),
		now:         time.Now,
	}

	// Orphan ReplicaSets wake the Deployments that could adopt them.
	orphanRS := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj api.Object) []reconcile.Request {
		rs, ok := obj.(*appsv1.ReplicaSet)
		if !ok || controllerutil.GetControllerOf(rs) != nil {
			return nil
		}
		ds, _ := r.deployments.List(ctx, client.InNamespace(rs.Namespace)) // synced: handlers run after the first sync
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
	podGone := handler.Func(func(ctx context.Context, ev handler.Event, q handler.Queue) {
		if ev.Type != cache.Deleted {
			return
		}
		ref := controllerutil.GetControllerOf(ev.Object)
		if ref == nil || ref.Kind != "ReplicaSet" {
			return
		}
		rs, err := r.replicaSets.Get(ctx, client.ObjectKey{Namespace: ev.Object.GetNamespace(), Name: ref.Name})
		if err != nil {
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
