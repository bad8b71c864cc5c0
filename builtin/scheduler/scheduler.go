package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	schedcache "github.com/converge-dev/converge/builtin/scheduler/cache"
	"github.com/converge-dev/converge/builtin/scheduler/config"
	"github.com/converge-dev/converge/builtin/scheduler/metrics"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/plugins"
	"github.com/converge-dev/converge/builtin/scheduler/profile"
	"github.com/converge-dev/converge/builtin/scheduler/queue"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/record"
)

// ErrNoNodesAvailable is the failure when the cluster has no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Options configure a Scheduler; the zero value gives the defaults.
type Options struct {
	// ConfigFile is a KubeSchedulerConfiguration-like YAML file ("" = defaults).
	ConfigFile string
	// Config, if set, is used instead of ConfigFile.
	Config *config.Configuration
	// Logger is the scheduler's logger (default: discard).
	Logger logr.Logger
	// OutOfTreeRegistry adds plugins built in Go code.
	OutOfTreeRegistry plugin.Registry
	// Queue tuning: InitialBackoff (1s), MaxBackoff (10s),
	// MaxUnschedulableDuration (5m).
	InitialBackoff, MaxBackoff, MaxUnschedulableDuration time.Duration
	// AssumedPodTTL bounds how long an assumed pod waits for its bind to be
	// observed (30s).
	AssumedPodTTL time.Duration
	// EventWorkers write events asynchronously (default 2); events beyond
	// a 10000-deep backlog are dropped, like Kubernetes' broadcaster does.
	EventWorkers int
	// MetricsRegisterer receives the scheduler's metrics (package metrics);
	// NewFromManager uses the manager's registry, served on /metrics. nil:
	// not registered.
	MetricsRegisterer prometheus.Registerer
}

// Stats are counters since Start.
type Stats struct {
	// Attempts, Scheduled (bound), Unschedulable and Errors count cycles.
	Attempts, Scheduled, Unschedulable, Errors int64
}

// Scheduler is the scheduler. Create it with New, run it with Start.
type Scheduler struct {
	opts      Options
	log       logr.Logger
	client    *client.Client
	informers *cache.SharedInformers
	cfg       *config.Configuration

	profiles map[string]*profile.Framework
	queue    *queue.PriorityQueue
	cache    *schedcache.Cache
	snapshot *schedcache.Snapshot

	podInformer  *cache.Informer[*corev1.Pod]
	nodeInformer *cache.Informer[*corev1.Node]
	// pvcInformer is set when a plugin registered PersistentVolumeClaim
	// events (VolumeBinding); its events are fed to the queue.
	pvcInformer *cache.Informer[*corev1.PersistentVolumeClaim]

	events chan func(context.Context)

	// nextStartNodeIndex rotates the first node evaluated; only the
	// scheduling goroutine uses it.
	nextStartNodeIndex int
	// filterStatuses, feasibleBuf and scoreTotals are buffers of the
	// scheduling cycle, reused across cycles; scheduling goroutine only.
	filterStatuses []*plugin.Status
	feasibleBuf    []*plugin.NodeInfo
	scoreTotals    []int64

	metrics *metrics.Metrics

	attempts, scheduled, unschedulable, errs atomic.Int64
	bindWG                                   sync.WaitGroup
}

var _ manager.LeaderElectionRunnable = (*Scheduler)(nil)

// NewFromManager builds a Scheduler on a manager's client and informers; add
// it with mgr.Add.
func NewFromManager(ctx context.Context, mgr *manager.Manager, opts Options) (*Scheduler, error) {
	if opts.Logger.GetSink() == nil {
		opts.Logger = mgr.Logger().WithName("scheduler")
	}
	if opts.MetricsRegisterer == nil {
		opts.MetricsRegisterer = mgr.Registry()
	}
	return New(ctx, mgr.Client(), mgr.Informers(), opts)
}

// New builds a Scheduler: it loads the configuration, instantiates every
// profile's plugins and registers informer handlers. Informers are started by
// their owner (the manager) or by Start when they are not yet running.
func New(ctx context.Context, c *client.Client, informers *cache.SharedInformers, opts Options) (*Scheduler, error) {
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.EventWorkers <= 0 {
		opts.EventWorkers = 2
	}
	cfg := opts.Config
	if cfg == nil {
		var err error
		if cfg, err = config.Load(opts.ConfigFile); err != nil {
			return nil, err
		}
	} else if err := cfg.Complete(); err != nil {
		return nil, err
	}
	registry := plugins.NewInTreeRegistry()
	if err := registry.Merge(opts.OutOfTreeRegistry); err != nil {
		return nil, fmt.Errorf("merge out-of-tree registry: %w", err)
	}
	s := &Scheduler{
		opts: opts, log: opts.Logger, client: c, informers: informers, cfg: cfg,
		profiles: map[string]*profile.Framework{},
		cache:    schedcache.New(schedcache.Options{AssumedPodTTL: opts.AssumedPodTTL}),
		snapshot: schedcache.NewEmptySnapshot(),
		events:   make(chan func(context.Context), 10000),
	}
	par := plugin.NewParallelizer(int(cfg.Parallelism))
	eventsByPlugin := map[string][]plugin.ClusterEventWithHint{}
	// The queue is created before the profiles so they can use its
	// nominator; PreEnqueue is resolved per pod through s.profiles.
	s.queue = queue.New(queue.Options{
		InitialBackoff: opts.InitialBackoff, MaxBackoff: opts.MaxBackoff, MaxUnschedulableDuration: opts.MaxUnschedulableDuration,
		PreEnqueue:     s.preEnqueue,
		EventsByPlugin: eventsByPlugin,
		Logger:         s.log,
	})
	s.metrics = metrics.New(opts.MetricsRegisterer, s.queue.PendingCounts)
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		var rec plugin.EventRecorder
		if c != nil {
			rec = &asyncRecorder{r: record.New(c, p.SchedulerName, s.log), ch: s.events, log: s.log}
		}
		fwk, err := profile.New(ctx, registry, p, profile.Options{
			Client: c, Informers: informers, Recorder: rec, Parallelizer: par,
			Nominator: s.queue.Nominator(), Snapshot: s.snapshot,
		})
		if err != nil {
			return nil, err
		}
		s.profiles[p.SchedulerName] = fwk
		for name, evs := range fwk.EventsToRegister() {
			if _, ok := eventsByPlugin[name]; !ok {
				eventsByPlugin[name] = evs
			}
		}
	}
	if informers != nil {
		var err error
		if s.podInformer, err = cache.InformerFor(informers, cache.InformerOptions[*corev1.Pod]{}); err != nil {
			return nil, fmt.Errorf("pod informer: %w", err)
		}
		if s.nodeInformer, err = cache.InformerFor(informers, cache.InformerOptions[*corev1.Node]{}); err != nil {
			return nil, fmt.Errorf("node informer: %w", err)
		}
		s.podInformer.AddHandler(s.onPodEvent)
		s.nodeInformer.AddHandler(s.onNodeEvent)
		if registersEvents(eventsByPlugin, plugin.PersistentVolumeClaim) {
			if s.pvcInformer, err = cache.InformerFor(informers, cache.InformerOptions[*corev1.PersistentVolumeClaim]{}); err != nil {
				return nil, fmt.Errorf("persistentvolumeclaim informer: %w", err)
			}
			s.pvcInformer.AddHandler(s.onClaimEvent)
		}
	}
	return s, nil
}

// registersEvents reports whether a plugin registered events of resource r,
// so that the scheduler watches that kind only when some plugin uses it.
func registersEvents(eventsByPlugin map[string][]plugin.ClusterEventWithHint, r plugin.EventResource) bool {
	for _, evs := range eventsByPlugin {
		for _, e := range evs {
			if e.Event.Resource == r {
				return true
			}
		}
	}
	return false
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// Stats returns the counters.
func (s *Scheduler) Stats() Stats {
	return Stats{Attempts: s.attempts.Load(), Scheduled: s.scheduled.Load(), Unschedulable: s.unschedulable.Load(), Errors: s.errs.Load()}
}

// Cache returns the scheduler cache (read-only use, for tests and debugging).
func (s *Scheduler) Cache() *schedcache.Cache { return s.cache }

// Queue returns the scheduling queue (read-only use, for tests and debugging).
func (s *Scheduler) Queue() *queue.PriorityQueue { return s.queue }

// Start runs the scheduler until ctx ends: it waits for the informers to
// sync, then schedules pods one at a time. It returns after in-flight
// bindings finish.
func (s *Scheduler) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	if s.informers != nil {
		// Starts the informers unless their owner (the manager) already did;
		// then SharedInformers.Start returns ErrStarted at once.
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.informers.Start(ctx) }()
		if !s.podInformer.WaitForCacheSync(ctx) || !s.nodeInformer.WaitForCacheSync(ctx) ||
			(s.pvcInformer != nil && !s.pvcInformer.WaitForCacheSync(ctx)) {
			wg.Wait()
			return ctx.Err()
		}
	}
	wg.Add(2 + s.opts.EventWorkers)
	go func() { defer wg.Done(); _ = s.cache.Start(ctx) }()
	go func() { defer wg.Done(); s.queue.Run(ctx) }()
	for i := 0; i < s.opts.EventWorkers; i++ {
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case fn := <-s.events:
					fn(ctx)
				}
			}
		}()
	}
	s.log.Info("scheduler started", "profiles", len(s.profiles))
	for ctx.Err() == nil {
		s.ScheduleOne(ctx)
	}
	s.queue.Close()
	s.bindWG.Wait()
	wg.Wait()
	return nil
}

func (s *Scheduler) profileFor(pod *corev1.Pod) *profile.Framework {
	name := pod.Spec.SchedulerName
	if name == "" {
		name = config.DefaultSchedulerName
	}
	return s.profiles[name]
}

func (s *Scheduler) preEnqueue(ctx context.Context, pod *corev1.Pod) *plugin.Status {
	fwk := s.profileFor(pod)
	if fwk == nil {
		return nil
	}
	return fwk.RunPreEnqueuePlugins(ctx, pod)
}

func assigned(p *corev1.Pod) bool { return p.Spec.NodeName != "" }

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// onPodEvent feeds the cache (assigned pods) and the queue (pending pods of
// our profiles).
func (s *Scheduler) onPodEvent(e cache.Event[*corev1.Pod]) {
	ctx := logr.NewContext(context.Background(), s.log)
	pod := e.Object
	switch e.Type {
	case cache.Added:
		if assigned(pod) {
			if !terminal(pod) {
				s.cache.AddPod(pod)
				s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Add, Label: "AssignedPodAdd"}, nil, pod, nil)
			}
			return
		}
		if s.profileFor(pod) != nil && pod.DeletionTimestamp == nil {
			s.queue.Add(ctx, pod)
		}
	case cache.Updated:
		old := e.Old
		switch {
		case assigned(pod):
			if !assigned(old) {
				// Bound: leaves the queue, confirms the assumed pod.
				s.queue.Delete(pod)
			}
			if terminal(pod) {
				s.cache.RemovePod(pod)
				s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Delete, Label: "AssignedPodDelete"}, old, nil, nil)
				return
			}
			s.cache.UpdatePod(old, pod)
			if assigned(old) {
				if a := podUpdateActions(old, pod); a != 0 {
					s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Pod, ActionType: a, Label: "AssignedPodUpdate"}, old, pod, nil)
				}
			} else {
				s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Add, Label: "AssignedPodAdd"}, nil, pod, nil)
			}
		case s.profileFor(pod) != nil:
			s.queue.Update(ctx, old, pod)
		}
	case cache.Deleted:
		if assigned(pod) {
			s.cache.RemovePod(pod)
			s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Pod, ActionType: plugin.Delete, Label: "AssignedPodDelete"}, pod, nil, nil)
			return
		}
		s.queue.Delete(pod)
		if fwk := s.profileFor(pod); fwk != nil {
			fwk.RejectWaitingPod(pod.UID)
		}
	}
}

func podUpdateActions(old, pod *corev1.Pod) plugin.ActionType {
	var a plugin.ActionType
	if !maps.Equal(old.Labels, pod.Labels) {
		a |= plugin.UpdatePodLabel
	}
	o, n := plugin.ComputePodRequests(old, false), plugin.ComputePodRequests(pod, false)
	if n.MilliCPU < o.MilliCPU || n.Memory < o.Memory || n.EphemeralStorage < o.EphemeralStorage {
		a |= plugin.UpdatePodScaleDown
	}
	return a
}

func nodeUpdateActions(old, n *corev1.Node) plugin.ActionType {
	var a plugin.ActionType
	if !reflect.DeepEqual(old.Status.Allocatable, n.Status.Allocatable) {
		a |= plugin.UpdateNodeAllocatable
	}
	if !maps.Equal(old.Labels, n.Labels) {
		a |= plugin.UpdateNodeLabel
	}
	if old.Spec.Unschedulable != n.Spec.Unschedulable || !reflect.DeepEqual(old.Spec.Taints, n.Spec.Taints) {
		a |= plugin.UpdateNodeTaint
	}
	if !reflect.DeepEqual(old.Status.Images, n.Status.Images) {
		a |= plugin.UpdateNodeCondition
	}
	return a
}

func (s *Scheduler) onNodeEvent(e cache.Event[*corev1.Node]) {
	ctx := logr.NewContext(context.Background(), s.log)
	switch e.Type {
	case cache.Added:
		s.cache.AddNode(e.Object)
		s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Node, ActionType: plugin.Add, Label: "NodeAdd"}, nil, e.Object, nil)
	case cache.Updated:
		s.cache.UpdateNode(e.Old, e.Object)
		if a := nodeUpdateActions(e.Old, e.Object); a != 0 {
			s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.Node, ActionType: a, Label: "NodeUpdate"}, e.Old, e.Object, nil)
		}
	case cache.Deleted:
		s.cache.RemoveNode(e.Object)
	}
}

// onClaimEvent moves the parked pods a claim added or updated may help (the
// plugins' hints check that the claim is one of the pod's).
func (s *Scheduler) onClaimEvent(e cache.Event[*corev1.PersistentVolumeClaim]) {
	ctx := logr.NewContext(context.Background(), s.log)
	switch e.Type {
	case cache.Added:
		s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.PersistentVolumeClaim, ActionType: plugin.Add, Label: "PvcAdd"}, nil, e.Object, nil)
	case cache.Updated:
		s.queue.MoveAllToActiveOrBackoffQueue(ctx, plugin.ClusterEvent{Resource: plugin.PersistentVolumeClaim, ActionType: plugin.Update, Label: "PvcUpdate"}, e.Old, e.Object, nil)
	}
}

// asyncRecorder writes events from a bounded backlog.
type asyncRecorder struct {
	r   *record.Recorder
	ch  chan func(context.Context)
	log logr.Logger
}

func (a *asyncRecorder) Eventf(_ context.Context, obj api.Object, eventType, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	select {
	case a.ch <- func(ctx context.Context) { a.r.Event(ctx, obj, eventType, reason, msg) }:
	default:
		a.log.V(1).Info("event dropped, backlog full", "reason", reason)
	}
}

// patchScheduledCondition sets PodScheduled=False with reason and message
// (and nominatedNodeName when nominating).
func (s *Scheduler) patchScheduledCondition(ctx context.Context, pod *corev1.Pod, reason, message string, nominating *plugin.NominatingInfo) error {
	if s.client == nil {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == reason && c.Message == message && nominating.Mode() == plugin.ModeNoop {
			return nil
		}
	}
	status := map[string]any{
		"conditions": []any{map[string]any{
			"type": corev1.PodScheduled, "status": corev1.ConditionFalse, "reason": reason, "message": message,
			"lastTransitionTime": api.Now(), "lastProbeTime": nil,
		}},
	}
	if nominating.Mode() == plugin.ModeOverride {
		if nominating.NominatedNodeName == "" {
			status["nominatedNodeName"] = nil
		} else {
			status["nominatedNodeName"] = nominating.NominatedNodeName
		}
	}
	body, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
	if err := s.client.Status().Patch(ctx, target, client.RawPatch(client.StrategicMergePatchType, body)); err != nil {
		return fmt.Errorf("patch PodScheduled condition of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// selectHost returns the node with the highest score; ties are broken
// uniformly at random (reservoir sampling).
func selectHost(nodes []*plugin.NodeInfo, totals []int64) string {
	best, seen := 0, 1
	for i := 1; i < len(nodes); i++ {
		switch {
		case totals[i] > totals[best]:
			best, seen = i, 1
		case totals[i] == totals[best]:
			seen++
			if rand.IntN(seen) == 0 {
				best = i
			}
		}
	}
	return nodes[best].NodeName()
}
