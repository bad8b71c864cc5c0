package admissionpolicy_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/testenv"
)

func TestAdmissionPolicy(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(10 * time.Second)
	RunSpecs(t, "ValidatingAdmissionPolicy suite")
}

// kubectlDispatcher is the Google Cloud SDK dispatcher; the versioned kubectl
// binaries live beside the file it links to (WIRE.md §1).
const kubectlDispatcher = "/usr/bin/kubectl"

var (
	env     *testenv.Environment
	kubectl string
	home    string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	real, err := filepath.EvalSymlinks(kubectlDispatcher)
	Expect(err).NotTo(HaveOccurred(), "kubectl %s is missing; this suite needs the real kubectl", kubectlDispatcher)
	kubectl = filepath.Join(filepath.Dir(real), "kubectl.1.33")
	_, err = os.Stat(kubectl)
	Expect(err).NotTo(HaveOccurred(), "kubectl 1.33 is missing beside %s", real)
	// A controller manager runs the policies' type-checking controller.
	env, err = testenv.Start(ctx, testenv.Options{Controllers: []string{"namespace"}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
	home = GinkgoT().TempDir()
}, NodeTimeout(time.Minute))

// run is one kubectl invocation: stdout, stderr and its error.
func run(ctx context.Context, stdin string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, kubectl, append([]string{"--cache-dir=" + filepath.Join(home, "cache")}, args...)...)
	cmd.Env = []string{"HOME=" + home, "KUBECONFIG=" + env.Kubeconfig, "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// apply applies manifest and expects success.
func apply(ctx context.Context, manifest string) {
	GinkgoHelper()
	out, errOut, err := run(ctx, manifest, "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred(), "kubectl apply: %s%s", out, errOut)
}

// exitErr is an *exec.ExitError (kubectl ran and failed).
func exitErr(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
