package kubectl

import (
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/internal/e2etool"
	"github.com/converge-dev/converge/testenv"
)

// suiteEnv is everything the specs share: one control plane, and one kubectl
// runner per binary, each with its own HOME and discovery cache.
type suiteEnv struct {
	env        *testenv.Environment
	dispatcher *kubectl
	v127       *kubectl
	v133       *kubectl
}

var suite *suiteEnv

func TestKubectl(t *testing.T) {
	RegisterFailHandler(Fail)
	// Eventually with a SpecContext keeps its default timeout; specs that need
	// longer say so.
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyTimeout(10 * time.Second)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if suiteConfig.Timeout > 3*time.Minute {
		suiteConfig.Timeout = 3 * time.Minute
	}
	RunSpecs(t, "kubectl acceptance suite", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	bins := map[string]string{}
	for _, v := range []string{"1.27", "1.33"} {
		p, err := e2etool.Kubectl(v)
		Expect(err).NotTo(HaveOccurred(), "this suite needs the real kubectl")
		bins["kubectl."+v] = p
	}

	env, err := testenv.Start(ctx, testenv.Options{LocalNode: true}) // the node runs the pods of stream_test.go
	Expect(err).NotTo(HaveOccurred(), "start control plane")
	DeferCleanup(func() {
		Expect(env.Stop()).To(Succeed(), "stop control plane")
	})

	home := GinkgoT().TempDir()
	suite = &suiteEnv{
		env:        env,
		dispatcher: newKubectl(e2etool.KubectlDispatcher, filepath.Join(home, "dispatcher"), env.Kubeconfig),
		v127:       newKubectl(bins["kubectl.1.27"], filepath.Join(home, "1.27"), env.Kubeconfig),
		v133:       newKubectl(bins["kubectl.1.33"], filepath.Join(home, "1.33"), env.Kubeconfig),
	}
}, NodeTimeout(time.Minute))
