package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestScheduler(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "scheduler")
}

var (
	env   *testenv.Environment
	c     *client.Client
	sched *scheduler.Scheduler
	nsN   atomic.Int32
	// metricsReg receives the scheduler's metrics, as the manager's registry does.
	metricsReg = prometheus.NewRegistry()
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(15 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	var err error
	// The volume binder binds claims to their first consumer's node, which
	// the VolumeBinding specs rely on; it touches nothing else.
	env, err = testenv.Start(ctx, testenv.Options{Controllers: []string{"volumebinder"}})
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	runCtx, cancel := context.WithCancel(context.Background())
	sched, err = scheduler.New(runCtx, c, cache.NewSharedInformers(c), scheduler.Options{
		Logger: logr.Discard(),
		// Short backoffs keep retries quick in tests; the 5 minute parking
		// limit stays, so moves must come from cluster events.
		InitialBackoff: 100 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		MetricsRegisterer: metricsReg,
	})
	Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- sched.Start(runCtx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).Should(Receive(BeNil()))
	})
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// Every spec starts from a cluster without nodes.
var _ = BeforeEach(func() {
	Eventually(sched.Cache().NodeCount).Should(BeZero())
})

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("sched-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

type nodeOpt func(*corev1.Node)

func withLabels(kv ...string) nodeOpt {
	return func(n *corev1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withTaint(key, value string, effect corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func unschedulable(n *corev1.Node) { n.Spec.Unschedulable = true }

func withImage(name string, size int64) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{name}, SizeBytes: size})
	}
}

// createNode creates a node with allocatable cpu/memory and 110 pods; it is
// deleted when the spec ends (and gone from the scheduler's cache).
func createNode(ctx context.Context, name, cpu, memory string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	n.Status.Allocatable = corev1.ResourceList{"cpu": api.MustParseQuantity(cpu), "memory": api.MustParseQuantity(memory), "pods": api.MustParseQuantity("110")}
	n.Status.Capacity = n.Status.Allocatable
	for _, o := range opts {
		o(n)
	}
	status := n.Status
	Expect(c.Create(ctx, n)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(c.Delete(ctx, n))).To(Succeed())
		// The next spec starts once the scheduler has dropped the node: its
		// pods must not land on it.
		Eventually(func() bool { _, ok := sched.Cache().GetNode(name); return ok }).Should(BeFalse())
	})
	n.Status = status
	Expect(c.Status().Update(ctx, n)).To(Succeed())
	// The scheduler must see the node's allocatable before pods are created.
	Eventually(func() bool {
		got, ok := sched.Cache().GetNode(name)
		return ok && len(got.Status.Allocatable) > 0
	}).Should(BeTrue())
	return n
}

type podOpt func(*corev1.Pod)

func requests(cpu, memory string) podOpt {
	return func(p *corev1.Pod) {
		rl := corev1.ResourceList{}
		if cpu != "" {
			rl["cpu"] = api.MustParseQuantity(cpu)
		}
		if memory != "" {
			rl["memory"] = api.MustParseQuantity(memory)
		}
		p.Spec.Containers[0].Resources.Requests = rl
	}
}

func createPod(ctx context.Context, ns, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	for _, o := range opts {
		o(p)
	}
	Expect(c.Create(ctx, p)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(c.Delete(ctx, p))).To(Succeed())
	})
	return p
}

func nodeNameOf(ctx context.Context, p *corev1.Pod) func() string {
	return func() string {
		var got corev1.Pod
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
			return "error: " + err.Error()
		}
		return got.Spec.NodeName
	}
}

func scheduledCondition(ctx context.Context, p *corev1.Pod) func() *corev1.PodCondition {
	return func() *corev1.PodCondition {
		var got corev1.Pod
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
			return nil
		}
		for i := range got.Status.Conditions {
			if got.Status.Conditions[i].Type == corev1.PodScheduled {
				return &got.Status.Conditions[i]
			}
		}
		return nil
	}
}

func eventsOf(ctx context.Context, p *corev1.Pod, reason string) func() []string {
	return func() []string {
		var list corev1.EventList
		if err := c.List(ctx, &list, client.InNamespace(p.Namespace)); err != nil {
			return nil
		}
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Name == p.Name && e.Reason == reason {
				out = append(out, e.Type+" "+e.Message)
			}
		}
		return out
	}
}

// metricValue returns the value of the first sample of the named metric whose
// labels include want (a histogram's sample count), or -1 when there is none.
func metricValue(name string, want map[string]string) float64 {
	families, err := metricsReg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			matched := 0
			for _, lp := range m.GetLabel() {
				if v, ok := want[lp.GetName()]; ok {
					if v != lp.GetValue() {
						continue metrics
					}
					matched++
				}
			}
			if matched != len(want) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return -1
}
