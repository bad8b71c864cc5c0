package kubectl

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/testenv"
)

// dispatcherPath is the Google Cloud SDK dispatcher (WIRE.md §1 "Local quirk");
// the versioned binaries live beside the file it links to.
const dispatcherPath = "/usr/bin/kubectl"

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
	real, err := filepath.EvalSymlinks(dispatcherPath)
	Expect(err).NotTo(HaveOccurred(), "kubectl dispatcher %s is missing; this suite needs the real kubectl", dispatcherPath)
	binDir := filepath.Dir(real)
	bins := map[string]string{}
	for _, name := range []string{"kubectl.1.27", "kubectl.1.33"} {
		p := filepath.Join(binDir, name)
		st, err := os.Stat(p)
		Expect(err).NotTo(HaveOccurred(), "versioned kubectl %s is missing beside %s", name, real)
		Expect(st.Mode()&0o111).NotTo(BeZero(), "%s is not executable", p)
		bins[name] = p
	}

	env, err := testenv.Start(ctx, testenv.Options{LocalNode: true}) // the node runs the pods of stream_test.go
	Expect(err).NotTo(HaveOccurred(), "start control plane")
	DeferCleanup(func() {
		Expect(env.Stop()).To(Succeed(), "stop control plane")
	})

	home := GinkgoT().TempDir()
	suite = &suiteEnv{
		env:        env,
		dispatcher: newKubectl(dispatcherPath, filepath.Join(home, "dispatcher"), env.Kubeconfig),
		v127:       newKubectl(bins["kubectl.1.27"], filepath.Join(home, "1.27"), env.Kubeconfig),
		v133:       newKubectl(bins["kubectl.1.33"], filepath.Join(home, "1.33"), env.Kubeconfig),
	}
}, NodeTimeout(time.Minute))
