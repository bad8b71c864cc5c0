package replicaset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/record"
)

// Event reasons, as Kubernetes' pod control records them.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
)

// errCreate and errDelete classify manageReplicas errors for the
// ReplicaFailure condition.
var (
	errCreate = errors.New("replicaset: create pods")
	errDelete = errors.New("replicaset: delete pods")
)

// manageReplicas creates or deletes pods so that rs has spec.replicas of them.
func (r *reconciler) manageReplicas(ctx context.Context, rs *appsv1.ReplicaSet, pods []*corev1.Pod) error {
	key := cache.KeyOf(rs)
	diff := len(pods) - int(replicas(rs))
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		r.expectations.Expect(key, n, nil)
		ok, err := slowStartBatch(n, 1, func() error { return r.createPod(ctx, rs) })
		if skipped := n - ok; skipped > 0 {
			r.expectations.LowerCreations(key, skipped)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errCreate, err)
		}
	case diff > 0:
		n := min(diff, BurstReplicas)
		victims := podsToDelete(pods, n)
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = cache.KeyOf(p)
		}
		r.expectations.Expect(key, 0, keys)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for _, p := range victims {
			wg.Go(func() {
				if err := r.deletePod(ctx, rs, p); err != nil {
					r.expectations.DeletionObserved(key, cache.KeyOf(p))
					if !apierrors.IsNotFound(err) {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%w: %w", errDelete, err)
		}
	}
	return nil
}

func replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

// podsToDelete returns the n pods to delete first.
func podsToDelete(pods []*corev1.Pod, n int) []*corev1.Pod {
	sorted := append([]*corev1.Pod(nil), pods...)
	podutil.SortForDeletion(sorted)
	return sorted[:min(n, len(sorted))]
}

// newPod returns the pod rs creates, controlled by ref.
func newPod(rs *appsv1.ReplicaSet, ref api.OwnerReference) *corev1.Pod {
	t := rs.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{
			GenerateName:    rs.Name + "-",
			Namespace:       rs.Namespace,
			Labels:          maps.Clone(t.Labels),
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      append([]string(nil), t.Finalizers...),
			OwnerReferences: []api.OwnerReference{ref},
		},
		Spec: t.Spec,
	}
	return pod
}

func (r *reconciler) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	tmpl, err := podutil.Clone(&rs.Spec.Template)
	if err != nil {
		return err
	}
	cp := *rs
	cp.Spec.Template = *tmpl
	pod := newPod(&cp, r.controllerRef(rs))
	if err := r.client.Create(ctx, pod); err != nil {
		r.recorder.Event(ctx, rs, record.Warning, ReasonFailedCreate, fmt.Sprintf("Error creating: %v", err))
		return fmt.Errorf("create pod for replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	r.recorder.Event(ctx, rs, record.Normal, ReasonSuccessfulCreate, fmt.Sprintf("Created pod: %s", pod.Name))
	return nil
}

func (r *reconciler) deletePod(ctx context.Context, rs *appsv1.ReplicaSet, p *corev1.Pod) error {
	if err := r.client.Delete(ctx, p); err != nil {
		if !apierrors.IsNotFound(err) {
			r.recorder.Event(ctx, rs, record.Warning, ReasonFailedDelete, fmt.Sprintf("Error deleting: %v", err))
		}
		return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	r.recorder.Event(ctx, rs, record.Normal, ReasonSuccessfulDelete, fmt.Sprintf("Deleted pod: %s", p.Name))
	return nil
}

// slowStartBatch calls fn count times in batches of growing size (initial,
// then doubling), the calls of a batch running concurrently. It stops after
// the first batch with a failure and returns the number of successful calls
// and the errors of that batch, so that a systematic failure (quota,
// validation) costs one call, not count.
func slowStartBatch(count, initial int, fn func() error) (int, error) {
	remaining, successes := count, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for range batch {
			wg.Go(func() {
				if err := fn(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, errors.Join(errs...)
		}
		remaining -= batch
	}
	return successes, nil
}
