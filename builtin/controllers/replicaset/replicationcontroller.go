package replicaset

import (
	"context"
	"fmt"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
)

// ReplicationControllerName is the ReplicationController controller's name.
const ReplicationControllerName = "replicationcontroller"

// SetupReplicationControllers adds the core/v1 ReplicationController
// controller to mgr. As in Kubernetes, it is the ReplicaSet controller working
// on ReplicaSets converted from the ReplicationControllers (the selector's
// labels as matchLabels): the same pods, expectations, adoption, status and
// events, with ReplicationController owner references, status writes and
// event subjects.
func SetupReplicationControllers(mgr *manager.Manager) error {
	rcLister, err := cache.ListerFor[*corev1.ReplicationController](mgr.Informers())
	if err != nil {
		return fmt.Errorf("replicationcontroller lister: %w", err)
	}
	podLister, err := cache.ListerFor[*corev1.Pod](mgr.Informers())
	if err != nil {
		return fmt.Errorf("pod lister: %w", err)
	}
	sets := rcSets{rcLister}
	r := &reconciler{
		replicaSets:  sets,
		pods:         podLister,
		client:       rcWriter{mgr.Client()},
		live:         rcLive{mgr.Client()},
		recorder:     rcRecorder{mgr.EventRecorder("replication-controller")},
		expectations: podutil.NewExpectations(nil),
		now:          time.Now,
		kind:         corev1.GroupVersion().WithKind("ReplicationController"),
	}
	podHandler := handler.Func(func(ctx context.Context, ev handler.Event, q handler.Queue) {
		r.handlePod(ev, q, func(ns string) []*appsv1.ReplicaSet {
			l, _ := sets.List(ctx, client.InNamespace(ns)) // synced: the handler runs after the first sync
			return l
		})
	})
	err = builder.ControllerManagedBy(mgr).Named(ReplicationControllerName).
		For(builder.Kind[*corev1.ReplicationController]()).
		Watches(builder.Kind[*corev1.Pod](), podHandler).
		WithOptions(controller.Options{MaxConcurrentReconciles: Workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build replicationcontroller controller: %w", err)
	}
	return nil
}

// asReplicaSet converts rc to the ReplicaSet the reconciler works on. It
// shares rc's maps and slices: the reconciler clones what it reads.
func asReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		TypeMeta:   api.TypeMeta{APIVersion: appsv1.GroupVersion.String(), Kind: "ReplicaSet"},
		ObjectMeta: rc.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{
			Replicas: rc.Spec.Replicas, MinReadySeconds: rc.Spec.MinReadySeconds,
			Selector: &api.LabelSelector{MatchLabels: rc.Spec.Selector},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas, ReadyReplicas: rc.Status.ReadyReplicas,
			AvailableReplicas: rc.Status.AvailableReplicas, ObservedGeneration: rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rs
}

// asReplicationController converts back a ReplicaSet from asReplicaSet.
func asReplicationController(rs *appsv1.ReplicaSet) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: rs.ObjectMeta,
		Spec: corev1.ReplicationControllerSpec{
			Replicas: rs.Spec.Replicas, MinReadySeconds: rs.Spec.MinReadySeconds, Template: &rs.Spec.Template,
		},
		Status: corev1.ReplicationControllerStatus{
			Replicas: rs.Status.Replicas, FullyLabeledReplicas: rs.Status.FullyLabeledReplicas, ReadyReplicas: rs.Status.ReadyReplicas,
			AvailableReplicas: rs.Status.AvailableReplicas, ObservedGeneration: rs.Status.ObservedGeneration,
		},
	}
	if rs.Spec.Selector != nil {
		rc.Spec.Selector = rs.Spec.Selector.MatchLabels
	}
	for _, c := range rs.Status.Conditions {
		rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rc
}

// rcSets lists ReplicationControllers from the cache as ReplicaSets.
type rcSets struct {
	l interface {
		Get(ctx context.Context, key client.ObjectKey) (*corev1.ReplicationController, error)
		List(ctx context.Context, opts ...client.ListOption) ([]*corev1.ReplicationController, error)
	}
}

func (s rcSets) Get(ctx context.Context, key client.ObjectKey) (*appsv1.ReplicaSet, error) {
	rc, err := s.l.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return asReplicaSet(rc), nil
}

func (s rcSets) List(ctx context.Context, opts ...client.ListOption) ([]*appsv1.ReplicaSet, error) {
	rcs, err := s.l.List(ctx, opts...)
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, len(rcs))
	for i, rc := range rcs {
		out[i] = asReplicaSet(rc)
	}
	return out, nil
}

// rcLive reads a live ReplicationController into the *appsv1.ReplicaSet the
// reconciler passes.
type rcLive struct{ c liveReader }

func (l rcLive) Get(ctx context.Context, key client.ObjectKey, obj api.Object) error {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return l.c.Get(ctx, key, obj)
	}
	rc := &corev1.ReplicationController{}
	if err := l.c.Get(ctx, key, rc); err != nil {
		return err
	}
	*rs = *asReplicaSet(rc)
	return nil
}

// rcWriter writes pods as they are and the status of a ReplicaSet as its
// ReplicationController's.
type rcWriter struct{ writer }

func (w rcWriter) Status() client.StatusWriter { return rcStatus{w.writer.Status()} }

type rcStatus struct{ client.StatusWriter }

func (s rcStatus) Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return s.StatusWriter.Update(ctx, obj, opts...)
	}
	rc := asReplicationController(rs)
	if err := s.StatusWriter.Update(ctx, rc, opts...); err != nil {
		return err
	}
	*rs = *asReplicaSet(rc)
	return nil
}

func (s rcStatus) Patch(ctx context.Context, obj api.Object, patch client.Patch, opts ...client.PatchOption) error {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return s.StatusWriter.Patch(ctx, obj, patch, opts...)
	}
	rc := asReplicationController(rs)
	if err := s.StatusWriter.Patch(ctx, rc, patch, opts...); err != nil {
		return err
	}
	*rs = *asReplicaSet(rc)
	return nil
}

// rcRecorder records the events of a ReplicaSet on its ReplicationController.
type rcRecorder struct{ r recorder }

func (r rcRecorder) Event(ctx context.Context, obj api.Object, eventType, reason, message string) {
	if rs, ok := obj.(*appsv1.ReplicaSet); ok {
		obj = asReplicationController(rs)
	}
	r.r.Event(ctx, obj, eventType, reason, message)
}
