package builder_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/testenv"
)

// TestMain checks for leaked goroutines; Ginkgo's interrupt handler lives for
// the whole process by design.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"))
}

func TestBuilder(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "builder")
}

var (
	env *testenv.Environment
	cfg *client.Config
	nsN atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(ctx, testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	cfg, _, err = kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// logSink collects log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (s *logSink) find(substrs ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
next:
	for _, l := range s.lines {
		for _, sub := range substrs {
			if !strings.Contains(l, sub) {
				continue next
			}
		}
		return l
	}
	return ""
}

// newManager builds a manager with the built-in scheme and a captured logger.
func newManager(logs *logSink) *manager.Manager {
	s, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	opts := manager.Options{Scheme: s, GracefulShutdownTimeout: 10 * time.Second}
	if logs != nil {
		opts.Logger = logs.logger()
	}
	mgr, err := manager.New(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	return mgr
}

// run starts mgr until the spec ends.
func run(ctx context.Context, mgr *manager.Manager) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done, 15*time.Second).Should(Receive(BeNil()))
		mgr.Client().REST().CloseIdleConnections()
	})
}

// namespace creates a fresh namespace for one spec.
func namespace(ctx context.Context, c *client.Client) string {
	name := fmt.Sprintf("builder-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// metric returns the value of the series name{labels} in reg (counter, gauge,
// or histogram sample count), or -1 if absent.
func metric(reg *prometheus.Registry, name string, labels map[string]string) float64 {
	mfs, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return -1
}
