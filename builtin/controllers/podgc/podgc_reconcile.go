package podgc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Reasons and messages Kubernetes' pod GC writes.
const (
	// ReasonDeletionByPodGC is the reason of the DisruptionTarget condition
	// of an orphaned pod.
	ReasonDeletionByPodGC = "DeletionByPodGC"
	// MessageNodeGone is the message of that condition.
	MessageNodeGone = "PodGC: node no longer exists"
	// TaintNodeOutOfService marks a node as out of service: its terminating
	// pods are force-deleted once it is not Ready.
	TaintNodeOutOfService = "node.kubernetes.io/out-of-service"
	// reasonEvicted is the status reason of a pod the node agent evicted.
	reasonEvicted = "Evicted"
)

// deleteWorkers bounds the concurrent deletions of one step.
const deleteWorkers = 8

// reconciler runs the passes. Reads come from informer stores, writes go
// through function-typed dependencies.
type reconciler struct {
	opts Options
	log  logr.Logger

	// missingSince holds, per node name seen missing, the time of the pass
	// that first saw it missing (the start of its quarantine). Only the
	// single worker touches it.
	missingSince map[string]time.Time

	reader reader
	client writer
}

// reader reads pods and nodes from the informer cache (manager.Reader).
type reader interface {
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer marks pods failed and deletes them (client.Client). Its Get reads the
// server: a node the cache does not hold is looked up there before its pods
// are deleted (the cache may not show a new node yet).
type writer interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// Reconcile runs one pass and requeues for the next.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if err := r.gc(ctx); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: r.opts.Period}, nil
}

// gc is one pass of the four collections, in Kubernetes' order.
func (r *reconciler) gc(ctx context.Context) error {
	podList := &corev1.PodList{}
	if err := r.reader.List(ctx, podList); err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	nodeList := &corev1.NodeList{}
	if err := r.reader.List(ctx, nodeList); err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	pods := make([]*corev1.Pod, len(podList.Items))
	for i := range podList.Items {
		pods[i] = &podList.Items[i]
	}
	nodes := map[string]*corev1.Node{}
	for i := range nodeList.Items {
		nodes[nodeList.Items[i].Name] = &nodeList.Items[i]
	}
	var errs []error
	if r.opts.TerminatedPodThreshold > 0 {
		errs = append(errs, r.gcTerminated(ctx, pods))
	}
	errs = append(errs,
		r.gcTerminating(ctx, pods, nodes),
		r.gcOrphaned(ctx, pods, nodes),
		r.gcUnscheduledTerminating(ctx, pods),
	)
	return errors.Join(errs...)
}

// gcTerminated deletes the terminated pods beyond the threshold, evicted
// ones first, then the oldest.
func (r *reconciler) gcTerminated(ctx context.Context, pods []*corev1.Pod) error {
	var terminated []*corev1.Pod
	for _, p := range pods {
		if isTerminated(p) {
			terminated = append(terminated, p)
		}
	}
	excess := len(terminated) - r.opts.TerminatedPodThreshold
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(terminated, byEvictionAndCreation)
	r.log.Info("Garbage collecting terminated pods", "count", excess, "threshold", r.opts.TerminatedPodThreshold)
	return r.deleteAll(ctx, terminated[:excess], nil)
}

// gcTerminating force-deletes terminating pods of nodes that are not Ready
// and are tainted out of service.
func (r *reconciler) gcTerminating(ctx context.Context, pods []*corev1.Pod, nodes map[string]*corev1.Node) error {
	var terminating []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
			continue
		}
		n, ok := nodes[p.Spec.NodeName]
		if !ok || isNodeReady(n) || !hasTaint(n, TaintNodeOutOfService) {
			continue
		}
		terminating = append(terminating, p)
	}
	if len(terminating) == 0 {
		return nil
	}
	slices.SortFunc(terminating, byEvictionAndCreation)
	r.log.Info("Garbage collecting terminating pods on out-of-service nodes", "count", len(terminating))
	return r.deleteAll(ctx, terminating, nil)
}

// gcOrphaned force-deletes the pods of nodes missing for the quarantine.
func (r *reconciler) gcOrphaned(ctx context.Context, pods []*corev1.Pod, nodes map[string]*corev1.Node) error {
	now := r.opts.Now()
	for _, p := range pods {
		name := p.Spec.NodeName
		if name == "" {
			continue
		}
		if _, ok := nodes[name]; ok {
			continue
		}
		if _, ok := r.missingSince[name]; !ok {
			r.missingSince[name] = now
		}
	}
	var errs []error
	deleted := map[string]bool{}
	for name, since := range r.missingSince {
		if now.Sub(since) < r.opts.Quarantine {
			continue
		}
		// Out of quarantine: forgotten whatever happens (a node still missing
		// with pods is quarantined again by the next pass, as Kubernetes'
		// delaying queue does after an error).
		delete(r.missingSince, name)
		if _, ok := nodes[name]; ok {
			continue
		}
		err := r.client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{})
		switch {
		case apierrors.IsNotFound(err):
			deleted[name] = true
		case err != nil:
			errs = append(errs, fmt.Errorf("get node %s: %w", name, err))
		}
	}
	var orphans []*corev1.Pod
	for _, p := range pods {
		if deleted[p.Spec.NodeName] {
			r.log.Info("Found orphaned pod assigned to a node that does not exist, deleting", "pod", p.Namespace+"/"+p.Name, "node", p.Spec.NodeName)
			orphans = append(orphans, p)
		}
	}
	cond := &corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: ReasonDeletionByPodGC, Message: MessageNodeGone,
	}
	errs = append(errs, r.deleteAll(ctx, orphans, cond))
	return errors.Join(errs...)
}

// gcUnscheduledTerminating force-deletes terminating pods bound to no node.
func (r *reconciler) gcUnscheduledTerminating(ctx context.Context, pods []*corev1.Pod) error {
	var unscheduled []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			unscheduled = append(unscheduled, p)
		}
	}
	return r.deleteAll(ctx, unscheduled, nil)
}

// deleteAll marks each pod Failed (with cond, if set) and force-deletes it,
// a few at a time.
func (r *reconciler) deleteAll(ctx context.Context, pods []*corev1.Pod, cond *corev1.PodCondition) error {
	if len(pods) == 0 {
		return nil
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	work := make(chan *corev1.Pod)
	for range min(deleteWorkers, len(pods)) {
		wg.Go(func() {
			for p := range work {
				if err := r.markFailedAndDelete(ctx, p, cond); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, p := range pods {
		work <- p
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// markFailedAndDelete is Kubernetes' markFailedAndDeletePodWithCondition: a
// pod not yet terminated gets phase Failed (and cond), so that it does not
// stay Running forever when no node agent will ever report it, then it is
// deleted with a grace of 0.
func (r *reconciler) markFailedAndDelete(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition) error {
	key := p.Namespace + "/" + p.Name
	r.log.Info("PodGC is force deleting pod", "pod", key)
	if !isTerminated(p) {
		status := map[string]any{"phase": corev1.PodFailed}
		if cond != nil {
			status["conditions"] = withCondition(p.Status.Conditions, *cond)
		}
		body, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
			"status":   status,
		})
		if err != nil {
			return fmt.Errorf("encode status of pod %s: %w", key, err)
		}
		target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
		if err := r.client.Status().Patch(ctx, target, client.RawPatch(client.MergePatchType, body)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			// A conflict means the cache was behind: the next pass retries.
			return fmt.Errorf("mark pod %s failed: %w", key, err)
		}
	}
	// A new target: p may share its fields with the informer's cache.
	target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
	err := r.client.Delete(ctx, target, client.GracePeriodSeconds(0), client.Preconditions{UID: api.Ptr(p.UID)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	return nil
}

// withCondition returns conds with cond set (replacing one of its type; the
// transition time changes only when the status does).
func withCondition(conds []corev1.PodCondition, cond corev1.PodCondition) []corev1.PodCondition {
	out := slices.Clone(conds)
	cond.LastTransitionTime = api.Now()
	for i := range out {
		if out[i].Type != cond.Type {
			continue
		}
		if out[i].Status == cond.Status {
			cond.LastTransitionTime = out[i].LastTransitionTime
		}
		out[i] = cond
		return out
	}
	return append(out, cond)
}

// isTerminated reports whether the pod finished (Succeeded or Failed).
func isTerminated(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// isEvicted reports whether the node agent evicted the pod.
func isEvicted(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed && p.Status.Reason == reasonEvicted
}

// byEvictionAndCreation orders evicted pods first, then by creation time,
// then by name.
func byEvictionAndCreation(a, b *corev1.Pod) int {
	if ea, eb := isEvicted(a), isEvicted(b); ea != eb {
		if ea {
			return -1
		}
		return 1
	}
	if c := a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// isNodeReady reports whether the node's Ready condition is True.
func isNodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hasTaint reports whether the node has a taint with key.
func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}
