package manager_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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

func TestManager(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "manager")
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

func newManager(opts manager.Options) *manager.Manager {
	return newManagerWithConfig(cfg, opts)
}

// newManagerWithConfig is newManager talking through c (e.g. a proxy).
func newManagerWithConfig(c *client.Config, opts manager.Options) *manager.Manager {
	s, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	opts.Scheme = s
	opts.Logger = GinkgoLogr
	mgr, err := manager.New(c, opts)
	Expect(err).NotTo(HaveOccurred())
	return mgr
}

// start runs mgr and returns a function that stops it and returns Start's
// error; it is also called at the end of the spec.
func start(ctx context.Context, mgr *manager.Manager) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var stopped atomic.Bool
	var result error
	stop = func() error {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			Eventually(done, 20*time.Second).Should(Receive(&result))
			mgr.Client().REST().CloseIdleConnections()
		}
		return result
	}
	DeferCleanup(func() { _ = stop() })
	return stop
}

func namespace(ctx context.Context, c *client.Client) string {
	name := fmt.Sprintf("manager-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}
