package webhook_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators/webhook"
	"github.com/converge-dev/converge/testenv"
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Operator webhooks")
}

var (
	env    *testenv.Environment
	cl     *client.Client
	ca     *pki.PKI
	cancel context.CancelFunc
)

// The operator runs as `converge up` runs a plugin: webhook.Install in a
// manager against an in-process control plane (without --secure), its
// certificates issued by the control plane's CA in the data dir. Certificates
// live 10 s and are renewed 8 s before expiry, so the suite sees rotations.
var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start(context.Background(), testenv.Options{Logger: GinkgoLogr})
	Expect(err).NotTo(HaveOccurred())
	cfg, _, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	Expect(err).NotTo(HaveOccurred())
	cl, err = client.New(cfg, client.Options{Scheme: scheme.New()})
	Expect(err).NotTo(HaveOccurred())
	ca, err = pki.EnsureCA(pki.Options{Dir: filepath.Join(env.Dir, "pki")})
	Expect(err).NotTo(HaveOccurred())

	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New(), Logger: GinkgoLogr})
	Expect(err).NotTo(HaveOccurred())
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	err = webhook.Install(ctx, mgr, widgetOperator{}, webhook.Options{
		Issuer: ca, CertValidity: 10 * time.Second, RenewBefore: 8 * time.Second, ResyncInterval: 500 * time.Millisecond,
		Logger: GinkgoLogr,
	})
	Expect(err).NotTo(HaveOccurred())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
