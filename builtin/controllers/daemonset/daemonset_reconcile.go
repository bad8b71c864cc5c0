package daemonset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/history"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// reader reads DaemonSets, nodes, pods and ControllerRevisions from the
// informer cache (manager.Reader).
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// writer creates and deletes pods and ControllerRevisions and writes
// DaemonSet status (client.Client).
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
	Status() client.StatusWriter
}

// recorder records events (record.Recorder).
type recorder interface {
	Event(ctx context.Context, obj api.Object, eventType, reason, message string)
}

// reconciler reconciles one DaemonSet. It reads from the cache; expectations
// keep it from acting on a cache that does not show its own pod creations and
// deletions yet (the pod informer's handler observes them).
type reconciler struct {
	now func() time.Time
	// failedBackoff spaces out the deletion of failed pods per DaemonSet and
	// node (nil: none).
	failedBackoff *podutil.Backoff
	expectations  *podutil.Expectations
	reader        reader
	client        writer
	// revisions finds or creates the current ControllerRevision
	// (client.Client); its Get is the one read from the server: a revision
	// whose create found the name taken.
	revisions history.Writer
	recorder  recorder
}

var _ reconcile.Reconciler = (*reconciler)(nil)

// nodeState is one node as seen for a DaemonSet.
type nodeState struct {
	node                      *corev1.Node
	shouldRun, shouldContinue bool
	pods                      []corev1.Pod // live daemon pods for the node, oldest first
}

// plan is what one reconcile decided to do.
type plan struct {
	create []string // node names
	delete []corev1.Pod
}

// Reconcile drives one DaemonSet; see the package documentation.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ds := &appsv1.DaemonSet{}
	if err := r.reader.Get(ctx, req.ObjectKey, ds); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.Forget(req.ObjectKey.String())
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get daemonset %s: %w", req.ObjectKey, err)
	}
	if ds.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	sel, err := labels.FromLabelSelector(ds.Spec.Selector)
	if err != nil {
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("daemonset %s selector: %w", req.ObjectKey, err))
	}
	// The plan is computed only when the cache shows every pod this
	// controller created or deleted for ds; meanwhile only the status is
	// written, and the pod events that meet the expectations enqueue ds.
	manage := r.expectations.Satisfied(req.ObjectKey.String())
	nodes := &corev1.NodeList{}
	if err := r.reader.List(ctx, nodes); err != nil {
		return reconcile.Result{}, fmt.Errorf("list nodes: %w", err)
	}
	allPods := &corev1.PodList{}
	if err := r.reader.List(ctx, allPods, client.InNamespace(ds.Namespace), client.MatchingLabelSelector{Selector: sel}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list pods of daemonset %s: %w", req.ObjectKey, err)
	}
	allCRs := &appsv1.ControllerRevisionList{}
	if err := r.reader.List(ctx, allCRs, client.InNamespace(ds.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list revisions of daemonset %s: %w", req.ObjectKey, err)
	}
	crs := ownedRevisions(ds, allCRs.Items)
	oldStatus := ds.Status
	curName, hash, err := r.ensureRevision(ctx, ds, crs)
	if err != nil {
		return reconcile.Result{}, err
	}

	var pods []corev1.Pod
	for _, p := range allPods.Items {
		if controllerutil.IsControlledBy(&p, ds) {
			pods = append(pods, p)
		}
	}
	now := r.now()
	states, orphans, finished := r.observe(ds, nodes.Items, pods)
	p := plan{delete: orphans}
	var requeue time.Duration
	for _, pod := range finished {
		node := targetNode(&pod)
		if pod.Status.Phase == corev1.PodSucceeded {
			r.recorder.Event(ctx, ds, record.Normal, "SucceededDaemonPod",
				fmt.Sprintf("Found succeeded daemon pod %s/%s on node %s, will try to delete it", pod.Namespace, pod.Name, node))
			p.delete = append(p.delete, pod)
			continue
		}
		if r.failedBackoff != nil {
			key := ds.UID + "/" + node
			if in, left := r.failedBackoff.InBackoff(key, now); in {
				requeue = minPositive(requeue, left)
				continue
			}
			r.failedBackoff.Next(key, now)
		}
		r.recorder.Event(ctx, ds, record.Warning, "FailedDaemonPod",
			fmt.Sprintf("Found failed daemon pod %s/%s on node %s, will try to kill it", pod.Namespace, pod.Name, node))
		p.delete = append(p.delete, pod)
	}
	for _, st := range states {
		switch {
		case !st.shouldContinue:
			p.delete = append(p.delete, st.pods...)
		case st.shouldRun && len(st.pods) == 0:
			p.create = append(p.create, st.node.Name)
		case len(st.pods) > 1 && !surging(ds, st, hash):
			// Duplicates: keep the oldest.
			p.delete = append(p.delete, st.pods[1:]...)
		}
	}
	requeue = minPositive(requeue, r.rollingUpdate(ds, states, hash, now, &p))

	collisions := ds.Status.CollisionCount
	ds.Status = computeStatus(ds, states, hash, now)
	ds.Status.CollisionCount, ds.Status.Conditions = collisions, oldStatus.Conditions
	if manage {
		if err := r.execute(ctx, ds, hash, p); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.cleanupRevisions(ctx, ds, crs, pods, curName, hash); err != nil {
		return reconcile.Result{}, err
	}
	if !api.EqualJSON(oldStatus, ds.Status) {
		if err := r.client.Status().Update(ctx, ds); err != nil {
			return reconcile.Result{}, fmt.Errorf("update status of daemonset %s: %w", req.ObjectKey, err)
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// observe groups the DaemonSet's live pods by node and evaluates every node.
// It returns the nodes, the pods of nodes that do not exist, and finished
// (failed or succeeded) pods.
func (r *reconciler) observe(ds *appsv1.DaemonSet, nodes []corev1.Node, pods []corev1.Pod) ([]*nodeState, []corev1.Pod, []corev1.Pod) {
	tmpl := ds.Spec.Template.Spec
	tmpl.Tolerations = slices.Clone(tmpl.Tolerations)
	daemonTolerations(&tmpl)
	byNode := map[string]*nodeState{}
	states := make([]*nodeState, 0, len(nodes))
	for i := range nodes {
		st := &nodeState{node: &nodes[i]}
		st.shouldRun, st.shouldContinue = nodePlacement(&tmpl, &nodes[i])
		byNode[nodes[i].Name] = st
		states = append(states, st)
	}
	var orphans, failed []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		st, ok := byNode[targetNode(&p)]
		switch {
		case !ok:
			orphans = append(orphans, p)
		case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
			failed = append(failed, p)
		default:
			st.pods = append(st.pods, p)
		}
	}
	for _, st := range states {
		slices.SortStableFunc(st.pods, func(a, b corev1.Pod) int {
			return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
		})
	}
	slices.SortFunc(states, func(a, b *nodeState) int { return cmp.Compare(a.node.Name, b.node.Name) })
	return states, orphans, failed
}

// surging reports whether a node's two pods are an old one and its surge
// replacement.
func surging(ds *appsv1.DaemonSet, st *nodeState, hash string) bool {
	if len(st.pods) != 2 {
		return false
	}
	return updated(ds, &st.pods[0], hash) != updated(ds, &st.pods[1], hash)
}

// execute applies the plan. Its creations and deletions are expected before
// they are sent; those that fail or are never sent are marked observed at
// once, so that only writes in flight hold the DaemonSet back.
func (r *reconciler) execute(ctx context.Context, ds *appsv1.DaemonSet, hash string, p plan) error {
	key := client.ObjectKeyFromObject(ds).String()
	seen := map[string]bool{}
	var dels []corev1.Pod
	var delKeys []string
	for _, pod := range p.delete {
		if !seen[pod.UID] {
			seen[pod.UID] = true
			dels = append(dels, pod)
			delKeys = append(delKeys, cache.KeyOf(&pod))
		}
	}
	r.expectations.Expect(key, len(p.create), delKeys)
	for i := range dels {
		pod := &dels[i]
		err := r.client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
		if err != nil {
			r.expectations.DeletionObserved(key, cache.KeyOf(pod)) // gone already, or not deleted
		}
		if err = client.IgnoreNotFound(err); err != nil {
			for _, rest := range dels[i+1:] {
				r.expectations.DeletionObserved(key, cache.KeyOf(&rest))
			}
			r.expectations.LowerCreations(key, len(p.create))
			r.recorder.Event(ctx, ds, record.Warning, "FailedDelete", fmt.Sprintf("Error deleting pod %s: %v", pod.Name, err))
			return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		r.recorder.Event(ctx, ds, record.Normal, "SuccessfulDelete", "Deleted pod: "+pod.Name)
	}
	for i, node := range p.create {
		pod, err := newPod(ds, node, hash)
		if err != nil {
			r.expectations.LowerCreations(key, len(p.create)-i)
			return err
		}
		if err := r.client.Create(ctx, pod); err != nil {
			r.expectations.LowerCreations(key, len(p.create)-i)
			r.recorder.Event(ctx, ds, record.Warning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			return fmt.Errorf("create pod for node %s: %w", node, err)
		}
		r.recorder.Event(ctx, ds, record.Normal, "SuccessfulCreate", "Created pod: "+pod.Name)
	}
	return nil
}

// newPod builds the daemon pod for node.
func newPod(ds *appsv1.DaemonSet, node, hash string) (*corev1.Pod, error) {
	var spec corev1.PodSpec
	b, err := json.Marshal(ds.Spec.Template.Spec)
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		return nil, fmt.Errorf("copy template of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	daemonTolerations(&spec)
	pinToNode(&spec, node)
	lbls := maps.Clone(ds.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	if gen := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; gen != "" {
		lbls[appsv1.DaemonSetTemplateGenerationKey] = gen
	}
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{
			GenerateName: ds.Name + "-", Namespace: ds.Namespace,
			Labels: lbls, Annotations: maps.Clone(ds.Spec.Template.Annotations),
			OwnerReferences: []api.OwnerReference{controllerRef(ds)},
		},
		Spec: spec,
	}, nil
}

func controllerRef(ds *appsv1.DaemonSet) api.OwnerReference {
	return controllerutil.NewControllerRef(ds, appsv1.GroupVersion.WithKind("DaemonSet"))
}

func podHash(p *corev1.Pod) string { return p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] }

// updated reports whether pod runs ds's current template, as Kubernetes'
// IsPodUpdated decides: its controller-revision-hash is the current
// revision's, or its pod-template-generation is the DaemonSet's template
// generation (deprecated.daemonset.template.generation) — so a pod stays
// current when its revision is relabelled, e.g. when an adopted copy of that
// revision becomes the current one.
func updated(ds *appsv1.DaemonSet, pod *corev1.Pod, hash string) bool {
	if hash != "" && podHash(pod) == hash {
		return true
	}
	gen := ds.Annotations[appsv1.DeprecatedTemplateGeneration]
	return gen != "" && pod.Labels[appsv1.DaemonSetTemplateGenerationKey] == gen
}

// minPositive is the smaller of two delays, ignoring zeros.
func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
