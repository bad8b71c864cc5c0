package replicaset

import (
	"context"
	"fmt"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
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

// Name is the controller's name (in logs, metrics and as the event source).
const Name = "replicaset"

// BurstReplicas bounds the pods created or deleted by one sync.
const BurstReplicas = 500

// Workers is the number of concurrent reconciles.
const Workers = 5

// replicaSetLister reads ReplicaSets from the cache without copies
// (cache.Lister): they are shared, the reconciler clones before changing one.
type replicaSetLister interface {
	Get(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error)
	List(ctx context.Context, opts ...client.ListOption) ([]*appsv1.ReplicaSet, error)
}

// podLister reads pods from the cache without copies (cache.Lister): a
// reconcile reads every pod of the namespace, which copies would make cost
// more than the rest of it.
type podLister interface {
	List(ctx context.Context, opts ...client.ListOption) ([]*corev1.Pod, error)
}

// writer creates, deletes and patches pods and writes ReplicaSet status
// (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Patch(ctx context.Context, obj api.Object, patch client.Patch, opts ...client.PatchOption) error
	Status() client.StatusWriter
}

// liveReader reads a ReplicaSet from the server (client.Client): a fresh read
// before adopting pods (the cache may not show it being deleted yet) and after
// a status write conflicts.
type liveReader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler reconciles ReplicaSets from the cache; expectations, fed by the
// pod handler, keep it from acting on a cache that does not show its own
// creations and deletions yet.
type reconciler struct {
	replicaSets  replicaSetLister
	pods         podLister
	client       writer
	live         liveReader
	recorder     recorder
	expectations *podutil.Expectations
	now          func() time.Time
	// kind is the kind of the controllers reconciled (zero: apps/v1
	// ReplicaSet); core/v1 ReplicationControllers are reconciled as
	// ReplicaSets converted from them (see SetupReplicationControllers).
	kind api.GroupVersionKind
}

// ownerKind is the kind of the controllers r reconciles.
func (r *reconciler) ownerKind() api.GroupVersionKind {
	if r.kind.Kind == "" {
		return appsv1.GroupVersion.WithKind("ReplicaSet")
	}
	return r.kind
}

// Setup adds the ReplicaSet controller to mgr.
func Setup(mgr *manager.Manager) error {
	rsLister, err := cache.ListerFor[*appsv1.ReplicaSet](mgr.Informers())
	if err != nil {
		return fmt.Errorf("replicaset lister: %w", err)
	}
	podLister, err := cache.ListerFor[*corev1.Pod](mgr.Informers())
	if err != nil {
		return fmt.Errorf("pod lister: %w", err)
	}
	r := &reconciler{
		replicaSets:  rsLister,
		pods:         podLister,
		client:       mgr.Client(),
		live:         mgr.Client(),
		recorder:     mgr.EventRecorder(Name + "-controller"),
		expectations: podutil.NewExpectations(nil),
		now:          time.Now,
	}
	podHandler := handler.Func(func(ctx context.Context, ev handler.Event, q handler.Queue) {
		r.handlePod(ev, q, func(ns string) []*appsv1.ReplicaSet {
			sets, _ := rsLister.List(ctx, client.InNamespace(ns)) // synced: the handler runs after the first sync
			return sets
		})
	})
	err = builder.ControllerManagedBy(mgr).Named(Name).
		For(builder.Kind[*appsv1.ReplicaSet]()).
		Watches(builder.Kind[*corev1.Pod](), podHandler).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build replicaset controller: %w", err)
	}
	return nil
}

// handlePod maps a pod event to ReplicaSet keys and feeds expectations. It
// runs on the informer goroutine: no API calls.
func (r *reconciler) handlePod(ev handler.Event, q handler.Queue, inNamespace func(ns string) []*appsv1.ReplicaSet) {
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	var old *corev1.Pod
	if ev.Type == cache.Updated {
		old, _ = ev.Old.(*corev1.Pod)
	}
	podKey := cache.KeyOf(pod)
	ownerKey := func(p *corev1.Pod) (client.ObjectKey, bool) {
		ref := r.controllerRefOf(p)
		if ref == nil {
			return client.ObjectKey{}, false
		}
		return client.ObjectKey{Namespace: p.Namespace, Name: ref.Name}, true
	}
	enqueue := func(k client.ObjectKey) { q.Add(reconcile.Request{ObjectKey: k}) }
	enqueueMatching := func(p *corev1.Pod) {
		sets := inNamespace(p.Namespace)
		for _, rs := range sets {
			sel, err := labels.FromLabelSelector(rs.Spec.Selector)
			if err != nil || sel.Empty() || !sel.Matches(p.Labels) {
				continue
			}
			enqueue(client.ObjectKey{Namespace: rs.Namespace, Name: rs.Name})
		}
	}

	k, owned := ownerKey(pod)
	switch ev.Type {
	case cache.Added:
		if owned {
			if pod.DeletionTimestamp != nil {
				r.expectations.DeletionObserved(k.String(), podKey)
			} else {
				r.expectations.CreationObserved(k.String())
			}
			enqueue(k)
			return
		}
		enqueueMatching(pod)
	case cache.Updated:
		if owned && pod.DeletionTimestamp != nil && (old == nil || old.DeletionTimestamp == nil) {
			r.expectations.DeletionObserved(k.String(), podKey)
		}
		if old != nil {
			if ok, had := ownerKey(old); had && (!owned || ok != k) {
				enqueue(ok) // released or moved: the old owner recounts
			}
		}
		if owned {
			enqueue(k)
			return
		}
		enqueueMatching(pod)
	case cache.Deleted:
		if owned {
			r.expectations.DeletionObserved(k.String(), podKey)
			enqueue(k)
			return
		}
		enqueueMatching(pod)
	}
}

// controllerRefOf returns pod's controlling reference to a controller of
// r's kind (any version of its group), or nil.
func (r *reconciler) controllerRefOf(pod *corev1.Pod) *api.OwnerReference {
	ref := controllerutil.GetControllerOf(pod)
	kind := r.ownerKind()
	if ref == nil || ref.Kind != kind.Kind {
		return nil
	}
	if gv, err := api.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != kind.Group {
		return nil
	}
	return ref
}
