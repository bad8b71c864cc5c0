package autoscale

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestAutoscale(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "HorizontalPodAutoscaler acceptance")
}

var (
	env      *testenv.Environment
	c        *client.Client
	nodeName = "hpa-node"
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(ctx, testenv.Options{Scheduler: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
	cfg := &client.Config{Host: env.URL}
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(cfg, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	mgr, started, err := controlplane.NewControllerManager(cfg, controlplane.ControllerManagerOptions{
		Controllers: []string{"replicaset", "deployment", "horizontalpodautoscaling"},
		HorizontalPodAutoscaler: controlplane.HorizontalPodAutoscalerOptions{
			SyncPeriod: time.Second, DownscaleStabilization: 2 * time.Second},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(started).To(ContainElement("horizontalpodautoscaling"))
	mgrDone := make(chan struct{})
	go func() { defer close(mgrDone); _ = mgr.Start(runCtx) }()

	n, err := controlplane.NewNode(ctx, controlplane.NodeOptions{Agent: node.Options{
		NodeName: nodeName, Config: cfg, RootDir: filepath.Join(GinkgoT().TempDir(), "node"),
		PodCIDR: "127.204.0.0/16", StatsInterval: 500 * time.Millisecond,
	}})
	Expect(err).NotTo(HaveOccurred())
	nodeDone := make(chan struct{})
	go func() { defer close(nodeDone); _ = n.Start(runCtx) }()
	DeferCleanup(func() { stop(); <-nodeDone; <-mgrDone })
}, NodeTimeout(time.Minute))
