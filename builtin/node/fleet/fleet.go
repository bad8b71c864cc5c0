package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/api/all"
	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/workqueue"
)

// Options configure a Fleet. The zero value of every field means its default,
// except that Config (or Client) is required.
type Options struct {
	// Config reaches the API server; Client, when set, is used instead.
	Config *client.Config
	Client *client.Client
	// Nodes is the number of nodes (default 1).
	Nodes int
	// NamePrefix names the nodes (default "sim-node-").
	NamePrefix string
	// Capacity of each node (default cpu 32, memory 256Gi, pods 110).
	Capacity corev1.ResourceList
	// Labels are added to every node; Zones are assigned round-robin.
	Labels map[string]string
	Zones  []string
	// LeaseDuration (40 s) and LeaseRenewInterval (10 s) of the node Leases.
	LeaseDuration, LeaseRenewInterval time.Duration
	// NodeStatusReportInterval re-reports node status (default 5 min).
	NodeStatusReportInterval time.Duration
	// PodStartDelay is how long a bound pod stays Pending (default 0).
	PodStartDelay time.Duration
	// JobCompletionDelay makes pods owned by a Job succeed that long after
	// they started (0: they run forever).
	JobCompletionDelay time.Duration
	// PodTerminationDelay is how long a pod being deleted (deletionTimestamp
	// set) stays Terminating before the fleet deletes it with a grace of 0
	// (default 0: at once, so large simulated clusters keep no Terminating
	// pods). It is capped by the pod's own grace period.
	PodTerminationDelay time.Duration
	// Workers is the number of concurrent writers (default 32).
	Workers int
	// Version is reported as the kubelet version (default v1.32.0).
	Version string
	// ServeStats makes the nodes serve /stats/summary and /metrics/resource
	// (so metrics.k8s.io, kubectl top and autoscalers see them): each node
	// takes a loopback InternalIP (127.112.0.1 for the first) and the fleet
	// answers on one port of all addresses for the node whose address was
	// dialled, with Usage's synthetic figures.
	ServeStats bool
	// Usage is each running container's synthetic usage (default
	// DefaultUsage: its requests).
	Usage func(pod *corev1.Pod, c *corev1.Container) Usage
	// Logger receives the fleet's logs.
	Logger logr.Logger
}

func (o *Options) complete() error {
	var errs []error
	if o.Config == nil && o.Client == nil {
		errs = append(errs, errors.New("simulated: Config or Client is required"))
	}
	if o.Nodes <= 0 {
		o.Nodes = 1
	}
	if o.Nodes > 65536 {
		errs = append(errs, fmt.Errorf("simulated: %d nodes is more than 65536", o.Nodes))
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "sim-node-"
	}
	if o.Capacity == nil {
		o.Capacity = corev1.ResourceList{"cpu": {S: "32"}, "memory": {S: "256Gi"}, "pods": {S: "110"}, "ephemeral-storage": {S: "1Ti"}}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.LeaseDuration, 40*time.Second)
	def(&o.LeaseRenewInterval, 10*time.Second)
	def(&o.NodeStatusReportInterval, 5*time.Minute)
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.Version == "" {
		o.Version = "v1.32.0"
	}
	return errors.Join(errs...)
}

// Fleet is a set of simulated nodes. Create it with New, run it with Start.
type Fleet struct {
	opts  Options
	log   logr.Logger
	c     *client.Client
	index map[string]int // node name → index

	ready     atomic.Int64 // nodes registered
	statsPort int          // the stats server's port (ServeStats), set before registration

	mu    sync.Mutex
	nodes []*simNode // guarded by mu for ipNext
	queue *workqueue.Typed[string]
	pods  *cache.Store[*corev1.Pod]
	seen  sync.Map // pod UID → time first seen
	// deleting maps pod UID → time its deletionTimestamp was first seen.
	deleting sync.Map
}

type simNode struct {
	name   string
	uid    string
	zone   string
	ipNext int
}

// New validates opts and returns a fleet.
func New(opts Options) (*Fleet, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	f := &Fleet{opts: opts, log: opts.Logger, c: opts.Client, index: map[string]int{}}
	if f.c == nil {
		sch, err := all.NewScheme()
		if err != nil {
			return nil, fmt.Errorf("simulated: build scheme: %w", err)
		}
		cfg := *opts.Config
		if cfg.UserAgent == "" {
			cfg.UserAgent = "converge-simulated-fleet"
		}
		if f.c, err = client.New(&cfg, client.Options{Scheme: sch}); err != nil {
			return nil, fmt.Errorf("simulated: %w", err)
		}
	}
	for i := range opts.Nodes {
		n := &simNode{name: opts.NamePrefix + strconv.Itoa(i), ipNext: 2}
		if len(opts.Zones) > 0 {
			n.zone = opts.Zones[i%len(opts.Zones)]
		}
		f.nodes = append(f.nodes, n)
		f.index[n.name] = i
	}
	return f, nil
}

// NodeNames lists the fleet's node names.
func (f *Fleet) NodeNames() []string {
	out := make([]string, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = n.name
	}
	return out
}

// Registered is the number of nodes registered so far.
func (f *Fleet) Registered() int { return int(f.ready.Load()) }

// parallel runs fn(i) for i in [0,n) on the fleet's workers.
func (f *Fleet) parallel(ctx context.Context, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(f.opts.Workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// Start registers the nodes, then renews leases and drives pods until ctx ends.
func (f *Fleet) Start(ctx context.Context) error {
	f.queue = workqueue.New[string](workqueue.Options[string]{})
	inf, err := cache.NewClientInformer[*corev1.Pod](f.c, cache.InformerOptions[*corev1.Pod]{
		OnError: func(err error) { f.log.V(1).Info("Pod watch error", "error", err.Error()) },
	})
	if err != nil {
		return fmt.Errorf("simulated: pod informer: %w", err)
	}
	f.pods = inf.Store()
	inf.AddHandler(func(ev cache.Event[*corev1.Pod]) {
		p := ev.Object
		if _, ok := f.index[p.Spec.NodeName]; !ok {
			return
		}
		if ev.Type == cache.Deleted {
			f.seen.Delete(p.UID)
			f.deleting.Delete(p.UID)
			return
		}
		f.queue.Add(p.Namespace + "/" + p.Name)
	})
	if f.opts.ServeStats {
		if f.statsPort, err = f.serveStats(ctx); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer f.queue.ShutDown()

	f.parallel(ctx, len(f.nodes), func(i int) {
		for ctx.Err() == nil {
			if err := f.register(ctx, f.nodes[i]); err != nil {
				f.log.V(1).Info("Register simulated node failed; retrying", "node", f.nodes[i].name, "error", err.Error())
				time.Sleep(200 * time.Millisecond)
				continue
			}
			f.ready.Add(1)
			return
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	f.log.Info("Simulated nodes registered", "nodes", len(f.nodes))
	wg.Add(3 + f.opts.Workers)
	go func() {
		defer wg.Done()
		if err := inf.Start(ctx); err != nil && ctx.Err() == nil {
			f.log.Error(err, "Pod informer stopped")
		}
	}()
	go func() { defer wg.Done(); f.spread(ctx, f.opts.LeaseRenewInterval, f.renewLease) }()
	go func() { defer wg.Done(); f.spread(ctx, f.opts.NodeStatusReportInterval, f.writeStatus) }()
	for range f.opts.Workers {
		go func() {
			defer wg.Done()
			for {
				key, shutdown := f.queue.Get()
				if shutdown {
					return
				}
				if after := f.syncPod(ctx, key); after > 0 {
					f.queue.AddAfter(key, after)
				}
				f.queue.Done(key)
			}
		}()
	}
	<-ctx.Done()
	return nil
}

// spread calls fn for node i at offset i·interval/N of every interval.
func (f *Fleet) spread(ctx context.Context, interval time.Duration, fn func(context.Context, *simNode) error) {
	n := len(f.nodes)
	const tick = 50 * time.Millisecond
	slots := max(int(interval/tick), 1)
	t := time.NewTicker(tick)
	defer t.Stop()
	work := make(chan *simNode, n)
	var wg sync.WaitGroup
	for range min(f.opts.Workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sn := range work {
				if err := fn(ctx, sn); err != nil && ctx.Err() == nil {
					f.log.V(1).Info("Simulated node heartbeat failed", "node", sn.name, "error", err.Error())
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(work)
	for slot := 0; ; slot = (slot + 1) % slots {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i := slot * n / slots; i < (slot+1)*n/slots; i++ {
			select {
			case work <- f.nodes[i]:
			default: // writers are behind: skip this beat rather than pile up
			}
		}
	}
}

func (f *Fleet) nodeStatus(now api.Time) corev1.NodeStatus {
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity: f.opts.Capacity, Allocatable: f.opts.Capacity, Phase: corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		NodeInfo: corev1.NodeSystemInfo{
			ContainerRuntimeVersion: "simulated://" + f.opts.Version, KubeletVersion: f.opts.Version,
			KubeProxyVersion: f.opts.Version, OperatingSystem: "linux", Architecture: "amd64", OSImage: "simulated",
		},
	}
}

func (f *Fleet) nodeIP(i int) string {
	if f.opts.ServeStats {
		return loopbackIP(i).String()
	}
	return fmt.Sprintf("10.%d.%d.1", i>>8, i&255)
}

func (f *Fleet) register(ctx context.Context, sn *simNode) error {
	i := f.index[sn.name]
	node := &corev1.Node{}
	node.Name = sn.name
	node.Labels = map[string]string{
		"kubernetes.io/hostname": sn.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"type": "simulated",
	}
	if sn.zone != "" {
		node.Labels["topology.kubernetes.io/zone"] = sn.zone
	}
	for k, v := range f.opts.Labels {
		node.Labels[k] = v
	}
	node.Spec.PodCIDR = fmt.Sprintf("10.%d.%d.0/24", i>>8, i&255)
	node.Spec.PodCIDRs = []string{node.Spec.PodCIDR}
	if err := f.c.Create(ctx, node); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", sn.name, err)
		}
		if err := f.c.Get(ctx, client.ObjectKey{Name: sn.name}, node); err != nil {
			return fmt.Errorf("get node %s: %w", sn.name, err)
		}
	}
	sn.uid = node.UID
	if err := f.writeStatus(ctx, sn); err != nil {
		return err
	}
	return f.renewLease(ctx, sn)
}

func (f *Fleet) writeStatus(ctx context.Context, sn *simNode) error {
	st := f.nodeStatus(api.Now())
	st.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: f.nodeIP(f.index[sn.name])}, {Type: corev1.NodeHostName, Address: sn.name}}
	st.DaemonEndpoints.KubeletEndpoint.Port = int32(f.statsPort)
	b, _ := json.Marshal(map[string]any{"status": st})
	node := &corev1.Node{}
	node.Name = sn.name
	if err := f.c.Status().Patch(ctx, node, client.RawPatch(client.MergePatchType, b)); err != nil {
		return fmt.Errorf("write node %s status: %w", sn.name, err)
	}
	return nil
}

func (f *Fleet) renewLease(ctx context.Context, sn *simNode) error {
	now := api.NowMicro()
	lease := &coordinationv1.Lease{}
	lease.Namespace, lease.Name = "kube-node-lease", sn.name
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"renewTime": now, "holderIdentity": sn.name}})
	err := f.c.Patch(ctx, lease, client.RawPatch(client.MergePatchType, b))
	if !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("renew lease %s: %w", sn.name, err)
		}
		return nil
	}
	lease = &coordinationv1.Lease{}
	lease.Namespace, lease.Name = "kube-node-lease", sn.name
	if sn.uid != "" {
		lease.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: sn.name, UID: sn.uid}}
	}
	lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: api.Ptr(sn.name),
		LeaseDurationSeconds: api.Ptr(int32(f.opts.LeaseDuration / time.Second)), RenewTime: &now}
	if err := f.c.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create lease %s: %w", sn.name, err)
	}
	return nil
}

func (f *Fleet) podIP(nodeName string) string {
	i := f.index[nodeName]
	f.mu.Lock()
	defer f.mu.Unlock()
	sn := f.nodes[i]
	ip := fmt.Sprintf("10.%d.%d.%d", i>>8, i&255, sn.ipNext)
	sn.ipNext++
	if sn.ipNext > 254 {
		sn.ipNext = 2
	}
	return ip
}

func isJobPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "Job" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// syncPod moves one pod along; it returns when to look again (0: not needed).
func (f *Fleet) syncPod(ctx context.Context, key string) time.Duration {
	p, ok := f.pods.Get(key)
	if !ok {
		return 0
	}
	if p.DeletionTimestamp != nil {
		if wait := f.terminationWait(p); wait > 0 {
			return wait
		}
		del := &corev1.Pod{}
		del.Namespace, del.Name = p.Namespace, p.Name
		uid := p.UID
		if err := f.c.Delete(ctx, del, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return time.Second
		}
		return 0
	}
	first, _ := f.seen.LoadOrStore(p.UID, time.Now())
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return 0
	case corev1.PodRunning:
		if f.opts.JobCompletionDelay <= 0 || !isJobPod(p) {
			return 0
		}
		started := first.(time.Time)
		if p.Status.StartTime != nil {
			started = p.Status.StartTime.Time
		}
		if wait := time.Until(started.Add(f.opts.JobCompletionDelay)); wait > 0 {
			return wait
		}
		return f.patchPod(ctx, p, f.succeeded(p))
	}
	if wait := time.Until(first.(time.Time).Add(f.opts.PodStartDelay)); wait > 0 {
		return wait
	}
	next := f.running(p)
	if d := f.patchPod(ctx, p, next); d > 0 {
		return d
	}
	if f.opts.JobCompletionDelay > 0 && isJobPod(p) {
		return f.opts.JobCompletionDelay
	}
	return 0
}

// terminationWait is how long the pod being deleted still stays Terminating:
// PodTerminationDelay (at most its grace period) after the fleet saw the
// deletion.
func (f *Fleet) terminationWait(p *corev1.Pod) time.Duration {
	delay := f.opts.PodTerminationDelay
	if g := p.DeletionGracePeriodSeconds; g != nil {
		delay = min(delay, time.Duration(*g)*time.Second)
	}
	if delay <= 0 {
		return 0
	}
	first, _ := f.deleting.LoadOrStore(p.UID, time.Now())
	return time.Until(first.(time.Time).Add(delay))
}

func (f *Fleet) patchPod(ctx context.Context, p *corev1.Pod, st corev1.PodStatus) time.Duration {
	b, _ := json.Marshal(map[string]any{"status": st})
	target := &corev1.Pod{}
	target.Namespace, target.Name = p.Namespace, p.Name
	if err := f.c.Status().Patch(ctx, target, client.RawPatch(client.MergePatchType, b)); err != nil {
		if client.IgnoreNotFound(err) != nil && ctx.Err() == nil {
			f.log.V(1).Info("Simulated pod status failed", "pod", p.Namespace+"/"+p.Name, "error", err.Error())
			return time.Second
		}
	}
	return 0
}

func (f *Fleet) running(p *corev1.Pod) corev1.PodStatus {
	now := api.Now()
	hostIP := f.nodeIP(f.index[p.Spec.NodeName])
	ip := hostIP
	if !p.Spec.HostNetwork {
		ip = f.podIP(p.Spec.NodeName)
	}
	st := corev1.PodStatus{Phase: corev1.PodRunning, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now, QOSClass: corev1.PodQOSBestEffort}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range p.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			ContainerID: "simulated://" + p.UID + "-" + c.Name,
			State:       corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, Started: api.Ptr(true),
			ContainerID: "simulated://" + p.UID + "-" + c.Name,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	return st
}

func (f *Fleet) succeeded(p *corev1.Pod) corev1.PodStatus {
	now := api.Now()
	st := f.running(p)
	st.PodIP, st.PodIPs = p.Status.PodIP, p.Status.PodIPs
	st.StartTime = p.Status.StartTime
	st.Phase = corev1.PodSucceeded
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady || t == corev1.PodReadyToStartContainers {
			st.Conditions[i].Status, st.Conditions[i].Reason = corev1.ConditionFalse, "PodCompleted"
		}
	}
	for i := range st.ContainerStatuses {
		started := now
		if r := p.Status.ContainerStatuses; i < len(r) && r[i].State.Running != nil {
			started = r[i].State.Running.StartedAt
		}
		st.ContainerStatuses[i].Ready, st.ContainerStatuses[i].Started = false, api.Ptr(false)
		st.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Completed", StartedAt: started, FinishedAt: now, ContainerID: st.ContainerStatuses[i].ContainerID}}
	}
	return st
}
