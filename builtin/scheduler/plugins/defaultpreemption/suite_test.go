package defaultpreemption_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/plugins"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/defaultpreemption"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestPreemption(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "defaultpreemption")
}

var (
	env   *testenv.Environment
	c     *client.Client
	sched *scheduler.Scheduler
	nsN   atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	var err error
	env, err = testenv.Start(ctx, testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	opts := scheduler.Options{Logger: logr.Discard(), InitialBackoff: 100 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
	// Until the in-tree registry lists DefaultPreemption, add it here.
	if _, ok := plugins.NewInTreeRegistry()[defaultpreemption.Name]; !ok {
		opts.OutOfTreeRegistry = plugin.Registry{defaultpreemption.Name: defaultpreemption.New}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	sched, err = scheduler.New(runCtx, c, cache.NewSharedInformers(c), opts)
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

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("preempt-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// createNode creates a node with the given allocatable cpu; it is deleted when
// the spec ends, and the spec ends once the scheduler no longer has it, so
// that the next spec's pods cannot land on it.
func createNode(ctx context.Context, name, cpu string) {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	n.Status.Allocatable = corev1.ResourceList{"cpu": api.MustParseQuantity(cpu), "memory": api.MustParseQuantity("1Gi"),
		"pods": api.MustParseQuantity("110")}
	n.Status.Capacity = n.Status.Allocatable
	status := n.Status
	Expect(c.Create(ctx, n)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(c.Delete(ctx, n))).To(Succeed())
		Eventually(func() bool { _, ok := sched.Cache().GetNode(name); return ok }).Should(BeFalse())
	})
	n.Status = status
	Expect(c.Status().Update(ctx, n)).To(Succeed())
}

func newPod(ns, name, cpu string, priority int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			Priority: api.Ptr(priority),
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": api.MustParseQuantity(cpu)}}}},
		},
	}
}

// createPod creates a pod requesting cpu with a priority; it is force-deleted
// when the spec ends.
func createPod(ctx context.Context, ns, name, cpu string, priority int32) *corev1.Pod {
	return createPodWith(ctx, ns, name, cpu, priority, func(*corev1.Pod) {})
}

func get(ctx context.Context, p *corev1.Pod) func() (*corev1.Pod, error) {
	return func() (*corev1.Pod, error) {
		var got corev1.Pod
		err := c.Get(ctx, client.ObjectKeyFromObject(p), &got)
		return &got, err
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
