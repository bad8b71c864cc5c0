package ephemeral

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "ephemeral-volume"

// Setup adds the ephemeral volume controller to mgr.
func Setup(mgr *manager.Manager) error {
	r := &reconciler{reader: mgr.Reader(), client: mgr.Client(), recorder: mgr.EventRecorder("ephemeral_volume")}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Pod]()).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// reader reads pods from the informer cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// writer creates claims (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler creates ephemeral volume claims. A claim the cache does not show
// yet makes its create answer AlreadyExists, which is success: claims are never
// read.
type reconciler struct {
	reader   reader
	client   writer
	recorder recorder
}

// Reconcile creates the missing claims of a pod's ephemeral volumes.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := r.reader.Get(ctx, req.ObjectKey, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get pod %s: %w", req.ObjectKey, err)
	}
	if pod.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	for _, v := range pod.Spec.Volumes {
		if v.Ephemeral == nil || v.Ephemeral.VolumeClaimTemplate == nil {
			continue
		}
		want := ClaimFor(pod, v)
		err := r.client.Create(ctx, want)
		switch {
		case err == nil:
			r.recorder.Event(ctx, pod, "Normal", "CreatedClaim", fmt.Sprintf("created PersistentVolumeClaim %s for ephemeral volume %s", want.Name, v.Name))
		case apierrors.IsAlreadyExists(err):
			// Kubernetes refuses to use a claim the pod does not own: the
			// scheduler reports it (VolumeBinding), nothing to do here.
		default:
			r.recorder.Event(ctx, pod, "Warning", "FailedCreate", fmt.Sprintf("creating PersistentVolumeClaim %s for ephemeral volume %s: %v", want.Name, v.Name, err))
			return reconcile.Result{}, fmt.Errorf("create claim %s/%s: %w", pod.Namespace, want.Name, err)
		}
	}
	return reconcile.Result{}, nil
}

// ClaimName is the name of the claim of an ephemeral volume: "<pod>-<volume>".
func ClaimName(pod *corev1.Pod, volume string) string { return pod.Name + "-" + volume }

// ClaimFor builds the claim of the ephemeral volume v of pod: the template's
// labels, annotations and spec, owned by the pod (controller, blocking its
// deletion like Kubernetes).
func ClaimFor(pod *corev1.Pod, v corev1.Volume) *corev1.PersistentVolumeClaim {
	t := v.Ephemeral.VolumeClaimTemplate
	yes := true
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{
			Name: ClaimName(pod, v.Name), Namespace: pod.Namespace,
			Labels: t.Labels, Annotations: t.Annotations,
			OwnerReferences: []api.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: t.Spec,
	}
	return pvc
}
