package podautoscaler_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/controllers/podautoscaler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestPodAutoscaler(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "horizontalpodautoscaling controller")
}

var (
	env *controllertest.Env
	mgr *controllertest.Manager
)

// The control plane has no node and so no metrics: these specs cover what
// the autoscaler does from the target's scale alone, and its failures. The
// metrics path runs in internal/e2e/autoscale on a real node.
var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "hpa", testenv.Options{})
	env.ApplyCRD(ctx, "testdata/widgets.yaml")
	mgr = env.StartManager(manager.Options{GracefulShutdownTimeout: 10 * time.Second}, func(m *manager.Manager) error {
		return podautoscaler.New(m, podautoscaler.Options{SyncPeriod: 500 * time.Millisecond})
	})
})

var _ = AfterSuite(func() {
	mgr.Stop()
	env.Stop()
})
