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

// Reconciler reconciles ReplicaSets. Its dependencies are functions so unit
// tests can stub them; Setup wires them to the manager's caches and client.
type Reconciler struct {
	// GetReplicaSet reads a ReplicaSet from the cache (nil when absent).
	GetReplicaSet func(key client.ObjectKey) *appsv1.ReplicaSet
	// GetLiveReplicaSet reads a ReplicaSet from the API server.
	GetLiveReplicaSet func(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error)
	// ListPods lists the cached pods of a namespace.
	ListPods func(namespace string) []*corev1.Pod
	// CreatePod creates a pod (generateName set).
	CreatePod func(ctx context.Context, pod *corev1.Pod) error
	// DeletePod deletes a pod.
	DeletePod func(ctx context.Context, pod *corev1.Pod) error
	// SetPodOwners replaces the ownerReferences of pod (optimistic lock on its
	// resourceVersion).
	SetPodOwners func(ctx context.Context, pod *corev1.Pod, refs []api.OwnerReference) error
	// UpdateStatus writes rs.Status through the status subresource.
	UpdateStatus func(ctx context.Context, rs *appsv1.ReplicaSet) error
	// Event records an event about obj.
	Event func(ctx context.Context, obj api.Object, eventType, reason, message string)
	// Expectations tracks issued creations and deletions per ReplicaSet key.
	Expectations *podutil.Expectations
	// Now is the clock.
	Now func() time.Time
}

// Setup adds the ReplicaSet controller to mgr.
func Setup(mgr *manager.Manager) error {
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
		GetReplicaSet: func(key client.ObjectKey) *appsv1.ReplicaSet {
			rs, _ := rsInf.Store().Get(key.String())
			return rs
		},
		GetLiveReplicaSet: func(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error) {
			rs := &appsv1.ReplicaSet{}
			return rs, c.Get(ctx, key, rs)
		},
		ListPods: func(ns string) []*corev1.Pod {
			pods, _ := podInf.Store().ByIndex(cache.NamespaceIndex, ns)
			return pods
		},
		CreatePod: func(ctx context.Context, pod *corev1.Pod) error { return c.Create(ctx, pod) },
		DeletePod: func(ctx context.Context, pod *corev1.Pod) error { return c.Delete(ctx, pod) },
		SetPodOwners: func(ctx context.Context, pod *corev1.Pod, refs []api.OwnerReference) error {
			orig := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace,
				ResourceVersion: pod.ResourceVersion, OwnerReferences: pod.OwnerReferences}}
			mod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace,
				ResourceVersion: pod.ResourceVersion, OwnerReferences: refs}}
			return c.Patch(ctx, mod, client.MergeFromWithOptimisticLock(orig))
		},
		UpdateStatus: func(ctx context.Context, rs *appsv1.ReplicaSet) error { return c.Status().Update(ctx, rs) },
		Event:        rec.Event,
		Expectations: podutil.NewExpectations(nil),
		Now:          time.Now,
	}
	podHandler := handler.Func(func(ctx context.Context, ev handler.Event, q handler.Queue) {
		r.handlePod(ev, q, rsInf.Store().ByIndex)
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
func (r *Reconciler) handlePod(ev handler.Event, q handler.Queue, byIndex func(index, value string) ([]*appsv1.ReplicaSet, error)) {
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
		ref := controllerRefOf(p)
		if ref == nil {
			return client.ObjectKey{}, false
		}
		return client.ObjectKey{Namespace: p.Namespace, Name: ref.Name}, true
	}
	enqueue := func(k client.ObjectKey) { q.Add(reconcile.Request{ObjectKey: k}) }
	enqueueMatching := func(p *corev1.Pod) {
		sets, _ := byIndex(cache.NamespaceIndex, p.Namespace)
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
				r.Expectations.DeletionObserved(k.String(), podKey)
			} else {
				r.Expectations.CreationObserved(k.String())
			}
			enqueue(k)
			return
		}
		enqueueMatching(pod)
	case cache.Updated:
		if owned && pod.DeletionTimestamp != nil && (old == nil || old.DeletionTimestamp == nil) {
			r.Expectations.DeletionObserved(k.String(), podKey)
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
			r.Expectations.DeletionObserved(k.String(), podKey)
			enqueue(k)
			return
		}
		enqueueMatching(pod)
	}
}

// controllerRefOf returns pod's controlling ReplicaSet reference, or nil.
func controllerRefOf(pod *corev1.Pod) *api.OwnerReference {
	ref := controllerutil.GetControllerOf(pod)
	if ref == nil || ref.Kind != "ReplicaSet" || !isAppsGroup(ref.APIVersion) {
		return nil
	}
	return ref
}

func isAppsGroup(apiVersion string) bool {
	gv, err := api.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == appsv1.GroupVersion.Group
}
