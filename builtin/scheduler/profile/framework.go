package profile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler/config"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// Options are the dependencies of a Framework; nil values are allowed in
// tests (Client, Informers, Recorder), the others get defaults.
type Options struct {
	Client       *client.Client
	Informers    *cache.SharedInformers
	Recorder     plugin.EventRecorder
	Parallelizer plugin.Parallelizer
	Nominator    plugin.PodNominator
	// Snapshot is the lister plugins see; the scheduler updates it in place
	// before each cycle.
	Snapshot plugin.SharedLister
	// DefaultPlugins replaces config.DefaultMultiPoint (tests).
	DefaultPlugins []config.Plugin
}

// Framework runs one profile.
type Framework struct {
	opts       Options
	name       string
	percentage *int32

	plugins    map[string]plugin.Plugin
	preEnqueue []plugin.PreEnqueuePlugin
	preFilter  []plugin.PreFilterPlugin
	filter     []plugin.FilterPlugin
	postFilter []plugin.PostFilterPlugin
	preScore   []plugin.PreScorePlugin
	score      []plugin.ScorePlugin
	weights    map[string]int64
	reserve    []plugin.ReservePlugin
	permit     []plugin.PermitPlugin
	preBind    []plugin.PreBindPlugin
	bind       []plugin.BindPlugin
	postBind   []plugin.PostBindPlugin

	waitingMu sync.Mutex
	waiting   map[string]*waitingPod

	// scoreBufs holds *[]plugin.NodeScore reused by RunScorePlugins.
	scoreBufs sync.Pool
}

var _ plugin.Handle = (*Framework)(nil)

type noopNominator struct{}

func (noopNominator) AddNominatedPod(*plugin.PodInfo, *plugin.NominatingInfo) {}
func (noopNominator) DeleteNominatedPodIfExists(*corev1.Pod)                  {}
func (noopNominator) NominatedPodsForNode(string) []*plugin.PodInfo           { return nil }

// New instantiates the profile's plugins.
func New(ctx context.Context, registry plugin.Registry, profile *config.Profile, opts Options) (*Framework, error) {
	if opts.Parallelizer == nil {
		opts.Parallelizer = plugin.NewParallelizer(0)
	}
	if opts.Nominator == nil {
		opts.Nominator = noopNominator{}
	}
	defaults := opts.DefaultPlugins
	if defaults == nil {
		defaults = config.DefaultMultiPoint()
	}
	f := &Framework{
		opts: opts, name: profile.SchedulerName, percentage: profile.PercentageOfNodesToScore,
		plugins: map[string]plugin.Plugin{}, weights: map[string]int64{}, waiting: map[string]*waitingPod{},
	}
	f.scoreBufs.New = func() any { return new([]plugin.NodeScore) }
	// Candidates: registered defaults plus every explicitly enabled plugin.
	var candidates []string
	for _, p := range defaults {
		if _, ok := registry[p.Name]; ok {
			candidates = append(candidates, p.Name)
		}
	}
	explicit := map[string]bool{}
	if ps := profile.Plugins; ps != nil {
		for _, set := range []config.PluginSet{ps.MultiPoint, ps.PreEnqueue, ps.PreFilter, ps.Filter, ps.PostFilter, ps.PreScore, ps.Score, ps.Reserve, ps.Permit, ps.PreBind, ps.Bind, ps.PostBind} {
			for _, p := range set.Enabled {
				explicit[p.Name] = true
				if !slices.Contains(candidates, p.Name) {
					candidates = append(candidates, p.Name)
				}
			}
		}
	}
	var errs []error
	for _, name := range candidates {
		factory, ok := registry[name]
		if !ok {
			errs = append(errs, fmt.Errorf("profile %q: plugin %q not registered", f.name, name))
			continue
		}
		var args any
		if raw := profile.Args(name); raw != nil {
			args = []byte(raw)
		}
		p, err := factory(ctx, args, f)
		if err != nil {
			errs = append(errs, fmt.Errorf("profile %q: initialize plugin %q: %w", f.name, name, err))
			continue
		}
		f.plugins[name] = p
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	resolve := func(ep config.ExtensionPoint, implements func(plugin.Plugin) bool) []config.Plugin {
		out := profile.Resolve(ep, defaults, func(name string) bool {
			p, ok := f.plugins[name]
			return ok && implements(p)
		})
		var kept []config.Plugin
		for _, pl := range out {
			p, ok := f.plugins[pl.Name]
			if !ok || !implements(p) {
				errs = append(errs, fmt.Errorf("profile %q: plugin %q does not extend %s", f.name, pl.Name, ep))
				continue
			}
			kept = append(kept, pl)
		}
		return kept
	}
	is := func(fn func(plugin.Plugin) bool) func(plugin.Plugin) bool { return fn }
	for _, pl := range resolve(config.PreEnqueue, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PreEnqueuePlugin); return ok })) {
		f.preEnqueue = append(f.preEnqueue, f.plugins[pl.Name].(plugin.PreEnqueuePlugin))
	}
	for _, pl := range resolve(config.PreFilter, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PreFilterPlugin); return ok })) {
		f.preFilter = append(f.preFilter, f.plugins[pl.Name].(plugin.PreFilterPlugin))
	}
	for _, pl := range resolve(config.Filter, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.FilterPlugin); return ok })) {
		f.filter = append(f.filter, f.plugins[pl.Name].(plugin.FilterPlugin))
	}
	for _, pl := range resolve(config.PostFilter, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PostFilterPlugin); return ok })) {
		f.postFilter = append(f.postFilter, f.plugins[pl.Name].(plugin.PostFilterPlugin))
	}
	for _, pl := range resolve(config.PreScore, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PreScorePlugin); return ok })) {
		f.preScore = append(f.preScore, f.plugins[pl.Name].(plugin.PreScorePlugin))
	}
	for _, pl := range resolve(config.Score, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.ScorePlugin); return ok })) {
		f.score = append(f.score, f.plugins[pl.Name].(plugin.ScorePlugin))
		w := int64(pl.Weight)
		if w == 0 {
			w = 1
		}
		if w < 0 || w > 100 {
			errs = append(errs, fmt.Errorf("profile %q: score plugin %q weight %d not in [1, 100]", f.name, pl.Name, w))
		}
		f.weights[pl.Name] = w
	}
	for _, pl := range resolve(config.Reserve, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.ReservePlugin); return ok })) {
		f.reserve = append(f.reserve, f.plugins[pl.Name].(plugin.ReservePlugin))
	}
	for _, pl := range resolve(config.Permit, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PermitPlugin); return ok })) {
		f.permit = append(f.permit, f.plugins[pl.Name].(plugin.PermitPlugin))
	}
	for _, pl := range resolve(config.PreBind, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PreBindPlugin); return ok })) {
		f.preBind = append(f.preBind, f.plugins[pl.Name].(plugin.PreBindPlugin))
	}
	for _, pl := range resolve(config.Bind, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.BindPlugin); return ok })) {
		f.bind = append(f.bind, f.plugins[pl.Name].(plugin.BindPlugin))
	}
	for _, pl := range resolve(config.PostBind, is(func(p plugin.Plugin) bool { _, ok := p.(plugin.PostBindPlugin); return ok })) {
		f.postBind = append(f.postBind, f.plugins[pl.Name].(plugin.PostBindPlugin))
	}
	if len(f.bind) == 0 {
		errs = append(errs, fmt.Errorf("profile %q: at least one bind plugin is needed", f.name))
	}
	_ = explicit
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

// ProfileName implements plugin.Handle.
func (f *Framework) ProfileName() string { return f.name }

// PercentageOfNodesToScore returns the profile's setting (nil: adaptive).
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentage }

// SnapshotSharedLister implements plugin.Handle.
func (f *Framework) SnapshotSharedLister() plugin.SharedLister { return f.opts.Snapshot }

// Client implements plugin.Handle.
func (f *Framework) Client() *client.Client { return f.opts.Client }

// Informers implements plugin.Handle.
func (f *Framework) Informers() *cache.SharedInformers { return f.opts.Informers }

// EventRecorder implements plugin.Handle.
func (f *Framework) EventRecorder() plugin.EventRecorder { return f.opts.Recorder }

// Parallelizer implements plugin.Handle.
func (f *Framework) Parallelizer() plugin.Parallelizer { return f.opts.Parallelizer }

// AddNominatedPod implements plugin.PodNominator.
func (f *Framework) AddNominatedPod(pi *plugin.PodInfo, info *plugin.NominatingInfo) {
	f.opts.Nominator.AddNominatedPod(pi, info)
}

// DeleteNominatedPodIfExists implements plugin.PodNominator.
func (f *Framework) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	f.opts.Nominator.DeleteNominatedPodIfExists(pod)
}

// NominatedPodsForNode implements plugin.PodNominator.
func (f *Framework) NominatedPodsForNode(nodeName string) []*plugin.PodInfo {
	return f.opts.Nominator.NominatedPodsForNode(nodeName)
}

// Plugins returns the instantiated plugins by name.
func (f *Framework) Plugins() map[string]plugin.Plugin { return f.plugins }

// HasPostFilterPlugins reports whether PostFilter plugins are configured.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// EventsToRegister returns the events registered by each plugin that
// implements plugin.EnqueueExtensions.
func (f *Framework) EventsToRegister() map[string][]plugin.ClusterEventWithHint {
	out := map[string][]plugin.ClusterEventWithHint{}
	for name, p := range f.plugins {
		if ee, ok := p.(plugin.EnqueueExtensions); ok {
			out[name] = ee.EventsToRegister()
		}
	}
	return out
}

// RunPreEnqueuePlugins runs PreEnqueue; the first rejection is returned with
// its plugin recorded.
func (f *Framework) RunPreEnqueuePlugins(ctx context.Context, pod *corev1.Pod) *plugin.Status {
	for _, p := range f.preEnqueue {
		if s := p.PreEnqueue(ctx, pod); !s.IsSuccess() {
			if s.Code() != plugin.Error {
				s = plugin.NewStatus(plugin.UnschedulableAndUnresolvable, s.Reasons()...)
			}
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunPreFilterPlugins runs PreFilter. It returns the merged node narrowing,
// the status (rejections carry the plugin) and records skipped plugins in state.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) (*plugin.PreFilterResult, *plugin.Status) {
	var result *plugin.PreFilterResult
	skip := map[string]struct{}{}
	for _, p := range f.preFilter {
		r, s := p.PreFilter(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip[p.Name()] = struct{}{}
			continue
		}
		if !s.IsSuccess() {
			s.WithPlugin(p.Name())
			if s.IsRejected() {
				return nil, s
			}
			return nil, plugin.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
		if !r.AllNodes() {
			result = result.Merge(r)
			if len(result.NodeNames) == 0 {
				return result, plugin.NewStatus(plugin.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) ["+p.Name()+"] simultaneously").WithPlugin(p.Name())
			}
		}
	}
	state.SetSkipFilter(skip)
	active := make([]plugin.FilterPlugin, 0, len(f.filter))
	for _, p := range f.filter {
		if _, skipped := skip[p.Name()]; !skipped {
			active = append(active, p)
		}
	}
	state.SetFilterPlugins(active)
	return result, nil
}

// RunPreFilterExtensionAddPod implements plugin.PluginsRunner.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *plugin.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status {
	for _, p := range f.preFilter {
		if state.SkipFilter(p.Name()) {
			continue
		}
		if ext := p.PreFilterExtensions(); ext != nil {
			if s := ext.AddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo); !s.IsSuccess() {
				return plugin.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", p.Name(), s.AsError()))
			}
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod implements plugin.PluginsRunner.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *plugin.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *plugin.PodInfo, nodeInfo *plugin.NodeInfo) *plugin.Status {
	for _, p := range f.preFilter {
		if state.SkipFilter(p.Name()) {
			continue
		}
		if ext := p.PreFilterExtensions(); ext != nil {
			if s := ext.RemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo); !s.IsSuccess() {
				return plugin.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", p.Name(), s.AsError()))
			}
		}
	}
	return nil
}

// RunFilterPlugins implements plugin.PluginsRunner.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeInfo *plugin.NodeInfo) *plugin.Status {
	plugins, ok := state.FilterPlugins()
	if !ok {
		plugins = f.filter
	}
	for _, p := range plugins {
		if !ok && state.SkipFilter(p.Name()) {
			continue
		}
		if s := p.Filter(ctx, state, pod, nodeInfo); !s.IsSuccess() {
			if !s.IsRejected() {
				s = plugin.AsStatus(fmt.Errorf("running %q filter plugin: %w", p.Name(), s.AsError()))
			}
			return s.WithPlugin(p.Name())
		}
	}
	return nil
}

// RunFilterPluginsWithNominatedPods implements plugin.PluginsRunner: the
// node must fit with the nominated pods of equal or higher priority added
// (pass 1) and without them (pass 2), as in kube-scheduler.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeInfo *plugin.NodeInfo) *plugin.Status {
	if !f.mayHaveNominatedPods() {
		return f.RunFilterPlugins(ctx, state, pod, nodeInfo)
	}
	var s *plugin.Status
	podsAdded := false
	for i := 0; i < 2; i++ {
		stateToUse, infoToUse := state, nodeInfo
		if i == 0 {
			var err error
			podsAdded, stateToUse, infoToUse, err = f.addNominatedPods(ctx, pod, state, nodeInfo)
			if err != nil {
				return plugin.AsStatus(err)
			}
		} else if !podsAdded || !s.IsSuccess() {
			break
		}
		s = f.RunFilterPlugins(ctx, stateToUse, pod, infoToUse)
		if !s.IsSuccess() && !s.IsRejected() {
			return s
		}
	}
	return s
}

func (f *Framework) addNominatedPods(ctx context.Context, pod *corev1.Pod, state *plugin.CycleState, nodeInfo *plugin.NodeInfo) (bool, *plugin.CycleState, *plugin.NodeInfo, error) {
	if nodeInfo.Node() == nil {
		return false, state, nodeInfo, nil
	}
	nominated := f.NominatedPodsForNode(nodeInfo.NodeName())
	if len(nominated) == 0 {
		return false, state, nodeInfo, nil
	}
	infoOut := nodeInfo.Snapshot()
	stateOut := state.Clone()
	added := false
	for _, pi := range nominated {
		if prio(pi.Pod) >= prio(pod) && pi.Pod.UID != pod.UID {
			infoOut.AddPodInfo(pi)
			if s := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, infoOut); !s.IsSuccess() {
				return false, state, nodeInfo, s.AsError()
			}
			added = true
		}
	}
	return added, stateOut, infoOut, nil
}

// nominationCounter is implemented by nominators that can tell cheaply that
// no pod is nominated anywhere (the scheduling queue's).
type nominationCounter interface {
	HasNominatedPods() bool
}

func (f *Framework) mayHaveNominatedPods() bool {
	if c, ok := f.opts.Nominator.(nominationCounter); ok {
		return c.HasNominatedPods()
	}
	return true
}

func prio(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// RunPostFilterPlugins runs PostFilter until one succeeds; otherwise it
// returns the joined rejection messages.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, m plugin.NodeToStatusReader) (*plugin.PostFilterResult, *plugin.Status) {
	var result *plugin.PostFilterResult
	var reasons []string
	var rejectorPlugin string
	for _, p := range f.postFilter {
		r, s := p.PostFilter(ctx, state, pod, m)
		if s.IsSuccess() {
			return r, s
		}
		if s.Code() == plugin.UnschedulableAndUnresolvable {
			return r, s.WithPlugin(p.Name())
		}
		if !s.IsRejected() {
			return nil, plugin.AsStatus(s.AsError()).WithPlugin(p.Name())
		}
		if r != nil && r.Mode() != plugin.ModeNoop {
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejectorPlugin == "" {
			rejectorPlugin = p.Name()
		}
	}
	return result, plugin.NewStatus(plugin.Unschedulable, reasons...).WithPlugin(rejectorPlugin)
}

// RunPreScorePlugins runs PreScore and records skipped plugins in state.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) *plugin.Status {
	skip := map[string]struct{}{}
	for _, p := range f.preScore {
		s := p.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip[p.Name()] = struct{}{}
			continue
		}
		if !s.IsSuccess() {
			return plugin.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	state.SetSkipScore(skip)
	return nil
}

// RunScorePlugins scores every node with every non-skipped Score plugin in
// parallel, normalises and weights the scores, and returns the totals in the
// order of nodes.
func (f *Framework) RunScorePlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo) ([]int64, *plugin.Status) {
	totals := make([]int64, len(nodes))
	if st := f.RunScorePluginsInto(ctx, state, pod, nodes, totals); !st.IsSuccess() {
		return nil, st
	}
	return totals, nil
}

// RunScorePluginsInto is RunScorePlugins writing the totals into totals,
// which must have len(nodes) elements (the scheduler reuses one buffer).
func (f *Framework) RunScorePluginsInto(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodes []*plugin.NodeInfo, totals []int64) *plugin.Status {
	if len(totals) != len(nodes) {
		return plugin.AsStatus(fmt.Errorf("score totals buffer has %d elements for %d nodes", len(totals), len(nodes)))
	}
	clear(totals)
	plugins := make([]plugin.ScorePlugin, 0, len(f.score))
	for _, p := range f.score {
		if !state.SkipScore(p.Name()) {
			plugins = append(plugins, p)
		}
	}
	if len(plugins) == 0 {
		return nil
	}
	// One buffer holds every plugin's list; it is reused across cycles.
	bufp := f.scoreBufs.Get().(*[]plugin.NodeScore)
	defer f.scoreBufs.Put(bufp)
	if need := len(plugins) * len(nodes); cap(*bufp) < need {
		*bufp = make([]plugin.NodeScore, need)
	}
	buf := (*bufp)[:len(plugins)*len(nodes)]
	scores := make([]plugin.NodeScoreList, len(plugins))
	for i := range scores {
		scores[i] = buf[i*len(nodes) : (i+1)*len(nodes) : (i+1)*len(nodes)]
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var errMu sync.Mutex
	var firstErr *plugin.Status
	f.opts.Parallelizer.Until(ctx, len(nodes), func(ctx context.Context, n int) {
		ni := nodes[n]
		name := ni.NodeName()
		for i, p := range plugins {
			s, st := p.Score(ctx, state, pod, ni)
			if !st.IsSuccess() {
				errMu.Lock()
				if firstErr == nil {
					firstErr = plugin.AsStatus(fmt.Errorf("running Score plugin %q: %w", p.Name(), st.AsError())).WithPlugin(p.Name())
				}
				errMu.Unlock()
				cancel()
				return
			}
			scores[i][n] = plugin.NodeScore{Name: name, Score: s}
		}
	}, "Score")
	if firstErr != nil {
		return firstErr
	}
	for i, p := range plugins {
		if ext := p.ScoreExtensions(); ext != nil {
			if s := ext.NormalizeScore(ctx, state, pod, scores[i]); !s.IsSuccess() {
				return plugin.AsStatus(fmt.Errorf("running Normalize on Score plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
			}
		}
		w := f.weights[p.Name()]
		for n := range scores[i] {
			s := scores[i][n].Score
			if s < plugin.MinNodeScore || s > plugin.MaxNodeScore {
				return plugin.AsStatus(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", p.Name(), s, plugin.MinNodeScore, plugin.MaxNodeScore))
			}
			totals[n] += s * w
		}
	}
	return nil
}

// RunReservePluginsReserve runs Reserve; on failure the caller must run
// RunReservePluginsUnreserve.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeName string) *plugin.Status {
	for _, p := range f.reserve {
		if s := p.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return plugin.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve runs Unreserve in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeName string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, nodeName)
	}
}

// RunPermitPlugins runs Permit. A Wait from any plugin (and no rejection)
// registers a waiting pod and returns Wait; WaitOnPermit then blocks.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeName string) *plugin.Status {
	timeouts := map[string]time.Duration{}
	for _, p := range f.permit {
		s, timeout := p.Permit(ctx, state, pod, nodeName)
		if s.IsSuccess() {
			continue
		}
		if s.IsWait() {
			timeouts[p.Name()] = min(timeout, 15*time.Minute)
			continue
		}
		if s.IsRejected() {
			return s.WithPlugin(p.Name())
		}
		return plugin.AsStatus(fmt.Errorf("running Permit plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
	}
	if len(timeouts) > 0 {
		wp := newWaitingPod(pod, timeouts)
		f.waitingMu.Lock()
		f.waiting[pod.UID] = wp
		f.waitingMu.Unlock()
		return plugin.NewStatus(plugin.Wait)
	}
	return nil
}

// WaitOnPermit blocks until a waiting pod is allowed or rejected.
func (f *Framework) WaitOnPermit(ctx context.Context, pod *corev1.Pod) *plugin.Status {
	f.waitingMu.Lock()
	wp := f.waiting[pod.UID]
	f.waitingMu.Unlock()
	if wp == nil {
		return nil
	}
	defer func() {
		f.waitingMu.Lock()
		delete(f.waiting, pod.UID)
		f.waitingMu.Unlock()
	}()
	select {
	case s := <-wp.done:
		return s
	case <-ctx.Done():
		return plugin.AsStatus(ctx.Err())
	}
}

// GetWaitingPod implements plugin.Handle.
func (f *Framework) GetWaitingPod(uid string) plugin.WaitingPod {
	f.waitingMu.Lock()
	defer f.waitingMu.Unlock()
	if wp, ok := f.waiting[uid]; ok {
		return wp
	}
	return nil
}

// IterateOverWaitingPods implements plugin.Handle.
func (f *Framework) IterateOverWaitingPods(fn func(plugin.WaitingPod)) {
	f.waitingMu.Lock()
	pods := make([]*waitingPod, 0, len(f.waiting))
	for _, wp := range f.waiting {
		pods = append(pods, wp)
	}
	f.waitingMu.Unlock()
	for _, wp := range pods {
		fn(wp)
	}
}

// RejectWaitingPod implements plugin.Handle.
func (f *Framework) RejectWaitingPod(uid string) bool {
	f.waitingMu.Lock()
	wp := f.waiting[uid]
	f.waitingMu.Unlock()
	if wp == nil {
		return false
	}
	wp.Reject("", "removed")
	return true
}

// RunPreBindPlugins runs PreBind.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeName string) *plugin.Status {
	for _, p := range f.preBind {
		if s := p.PreBind(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return plugin.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunBindPlugins runs Bind until a plugin does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeName string) *plugin.Status {
	for _, p := range f.bind {
		s := p.Bind(ctx, state, pod, nodeName)
		if s.IsSkip() {
			continue
		}
		if !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return plugin.AsStatus(fmt.Errorf("running Bind plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
		return nil
	}
	return plugin.NewStatus(plugin.Skip)
}

// RunPostBindPlugins runs PostBind.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *plugin.CycleState, pod *corev1.Pod, nodeName string) {
	for _, p := range f.postBind {
		p.PostBind(ctx, state, pod, nodeName)
	}
}

// waitingPod implements plugin.WaitingPod.
type waitingPod struct {
	pod     *corev1.Pod
	mu      sync.Mutex
	pending map[string]*time.Timer
	done    chan *plugin.Status
}

func newWaitingPod(pod *corev1.Pod, timeouts map[string]time.Duration) *waitingPod {
	wp := &waitingPod{pod: pod, pending: map[string]*time.Timer{}, done: make(chan *plugin.Status, 1)}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for name, d := range timeouts {
		wp.pending[name] = time.AfterFunc(d, func() {
			wp.Reject(name, "rejected due to timeout after waiting "+d.String()+" at plugin "+name)
		})
	}
	return wp
}

// GetPod implements plugin.WaitingPod.
func (w *waitingPod) GetPod() *corev1.Pod { return w.pod }

// GetPendingPlugins implements plugin.WaitingPod.
func (w *waitingPod) GetPendingPlugins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for n := range w.pending {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Allow implements plugin.WaitingPod.
func (w *waitingPod) Allow(plugin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[plugin]; ok {
		t.Stop()
		delete(w.pending, plugin)
	}
	if len(w.pending) == 0 {
		select {
		case w.done <- nil:
		default:
		}
	}
}

// Reject implements plugin.WaitingPod.
func (w *waitingPod) Reject(pluginName, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.pending {
		t.Stop()
	}
	select {
	case w.done <- plugin.NewStatus(plugin.Unschedulable, msg).WithPlugin(pluginName):
	default:
	}
}
