package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/kubeletmetrics"
	"github.com/converge-dev/converge/builtin/node/podnet"
	"github.com/converge-dev/converge/builtin/node/stats"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/record"
)

// Agent is a node agent. Create it with New and run it with Start.
type Agent struct {
	opts Options
	log  logr.Logger
	c    *client.Client
	rt   cri.Runtime
	rec  *record.Recorder
	ipam *ipam
	// podnet gives pods network namespaces (PodNetworkCNI); nil with
	// PodNetworkLoopback. Set by Start before any pod worker exists.
	podnet *podnet.Network
	stats  *stats.Sampler
	// metrics are the kubelet_* metrics, served at /metrics from registry.
	metrics  *kubeletmetrics.Metrics
	registry *prometheus.Registry

	logPort  int
	podCIDR  string // in use: the Node's spec.podCIDR or Options.PodCIDR (set by register)
	nodeUID  string
	listener net.Listener

	// Node status bookkeeping, used only by register and runNodeStatus (one
	// goroutine at a time).
	lastStatusKey   string
	lastStatusWrite time.Time
	lastConditions  []corev1.NodeCondition

	ctx context.Context // the agent's run context, set by Start

	adoptable adoptable  // containers of an earlier agent (adopt.go)
	ports     portClaims // host ports held by admitted pods (hostports.go)
	images    *imageGC   // image use and garbage collection (imagegc.go)

	mu      sync.Mutex
	workers map[string]*podWorker // by pod UID; guarded by mu
	byName  map[string]*podWorker // by namespace/name; guarded by mu
	wg      sync.WaitGroup
}

// New validates opts and returns an agent.
func New(opts Options) (*Agent, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	a := &Agent{opts: opts, log: opts.Logger.WithValues("node", opts.NodeName), rt: opts.Runtime, images: newImageGC(),
		workers: map[string]*podWorker{}, byName: map[string]*podWorker{}}
	a.c = opts.Client
	if a.c == nil {
		sch, err := all.NewScheme()
		if err != nil {
			return nil, fmt.Errorf("node: build scheme: %w", err)
		}
		cfg := *opts.Config
		if cfg.UserAgent == "" {
			cfg.UserAgent = "converge-node/" + opts.NodeName
		}
		c, err := client.New(&cfg, client.Options{Scheme: sch})
		if err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
		a.c = c
	}
	ip, err := newIPAM(opts.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	a.ipam = ip
	a.rec = record.New(a.c, "kubelet", a.log)
	a.registry = opts.Metrics
	if a.registry == nil {
		a.registry = prometheus.NewRegistry()
	}
	a.metrics = kubeletmetrics.New(a.registry, a.runningCounts)
	if a.stats, err = a.newSampler(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	return a, nil
}

// NodeName is the Node's name.
func (a *Agent) NodeName() string { return a.opts.NodeName }

// LogPort is the log server's port (0 before Start listens).
func (a *Agent) LogPort() int { return a.logPort }

// Start registers the node and runs the agent until ctx ends, then stops the
// containers it started. It returns an error only when it cannot start.
func (a *Agent) Start(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(a.opts.RootDir, "pods"), 0o755); err != nil {
		return fmt.Errorf("node: create root dir: %w", err)
	}
	ln, err := net.Listen("tcp", a.opts.LogAddress)
	if err != nil {
		return fmt.Errorf("node: listen for logs on %s: %w", a.opts.LogAddress, err)
	}
	a.logPort = ln.Addr().(*net.TCPAddr).Port
	if a.opts.LogTLS != nil {
		ln = tls.NewListener(ln, a.opts.LogTLS)
	}
	a.listener = ln
	srv := &http.Server{Handler: a.logHandler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error(err, "Log server stopped")
		}
	}()
	defer srv.Close()
	a.ctx = ctx

	for {
		err := a.register(ctx)
		if err == nil {
			break
		}
		a.log.Error(err, "Node registration failed; retrying")
		select {
		case <-ctx.Done():
			return fmt.Errorf("node: register: %w", err)
		case <-time.After(time.Second):
		}
	}
	a.log.Info("Node registered", "logPort", a.logPort, "runtime", a.rt.Name())
	if err := a.startPodNetwork(a.podCIDR); err != nil {
		return err
	}

	a.loadAdoptable(ctx)
	inf, err := cache.NewClientInformer[*corev1.Pod](a.c, cache.InformerOptions[*corev1.Pod]{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", a.opts.NodeName),
		OnError:       func(err error) { a.log.V(1).Info("Pod watch error", "error", err.Error()) },
	})
	if err != nil {
		return fmt.Errorf("node: pod informer: %w", err)
	}
	inf.AddHandler(func(ev cache.Event[*corev1.Pod]) {
		if ev.Type == cache.Deleted {
			a.podGone(ev.Object)
			return
		}
		a.podChanged(ev.Object)
	})
	var bg sync.WaitGroup
	bg.Add(7)
	go func() { defer bg.Done(); a.runImageGC(ctx) }()
	go func() { defer bg.Done(); _ = a.stats.Start(ctx) }()
	go func() { defer bg.Done(); a.runClaimSweeper(ctx) }()
	go func() {
		defer bg.Done()
		if inf.WaitForCacheSync(ctx) {
			a.removeOrphans(ctx, inf.Store().List())
			a.removeOrphanNetworks(ctx, inf.Store().List())
		}
	}()
	go func() { defer bg.Done(); a.runLease(ctx) }()
	go func() { defer bg.Done(); a.runNodeStatus(ctx) }()
	go func() {
		defer bg.Done()
		if err := inf.Start(ctx); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Pod informer stopped")
		}
	}()
	<-ctx.Done()
	a.shutdown()
	bg.Wait()
	return nil
}

// shutdown stops every pod's containers (bounded grace) after ctx ended.
func (a *Agent) shutdown() {
	a.mu.Lock()
	ws := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		ws = append(ws, w)
	}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.shutdown(5 * time.Second) }()
	}
	wg.Wait()
	a.wg.Wait()
}

func (a *Agent) podChanged(pod *corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx.Err() != nil {
		return
	}
	w, ok := a.workers[pod.UID]
	if !ok {
		if pod.DeletionTimestamp != nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed) {
			// Finished before we saw it: just complete the deletion.
			go a.deleteFinal(pod)
			return
		}
		w = newPodWorker(a, pod)
		a.workers[pod.UID] = w
		a.byName[pod.Namespace+"/"+pod.Name] = w
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			w.run()
			a.mu.Lock()
			delete(a.workers, pod.UID)
			if a.byName[pod.Namespace+"/"+pod.Name] == w {
				delete(a.byName, pod.Namespace+"/"+pod.Name)
			}
			a.mu.Unlock()
		}()
		return
	}
	w.update(pod)
}

func (a *Agent) podGone(pod *corev1.Pod) {
	a.mu.Lock()
	w, ok := a.workers[pod.UID]
	a.mu.Unlock()
	if ok {
		w.markGone()
	}
}

func (a *Agent) deleteFinal(pod *corev1.Pod) {
	p := &corev1.Pod{}
	p.Namespace, p.Name = pod.Namespace, pod.Name
	if err := a.c.Delete(a.ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID}); err != nil && client.IgnoreNotFound(err) != nil {
		a.log.V(1).Info("Final pod delete failed", "pod", pod.Namespace+"/"+pod.Name, "error", err.Error())
	}
}

// worker returns the worker of namespace/name.
func (a *Agent) worker(namespace, name string) *podWorker {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byName[namespace+"/"+name]
}
