package examples

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/cmd/converge/cli"
	"github.com/converge-dev/converge/testenv"
)

func TestExamples(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "examples/")
}

var (
	env  *testenv.Environment
	root string // the repository root
)

var _ = BeforeSuite(func() {
	var err error
	root, err = filepath.Abs("../../..")
	Expect(err).NotTo(HaveOccurred())
	env, err = testenv.Start(context.Background(), testenv.Options{
		Controllers: []string{"*"}, Scheduler: true, LocalNode: true,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
})

// example returns the path of a file or folder under examples/.
func example(rel string) string { return filepath.Join(root, "examples", rel) }

// converge runs the CLI in-process against the environment and returns its
// stdout, failing the spec on a non-zero exit.
func converge(args ...string) string {
	GinkgoHelper()
	var out, errOut bytes.Buffer
	code := cli.Execute(context.Background(), append(args, "--kubeconfig", env.Kubeconfig), &out, &errOut)
	Expect(code).To(BeZero(), "converge %v: %s%s", args, out.String(), errOut.String())
	return out.String()
}

// kubectl runs the real kubectl against the environment.
func kubectl(args ...string) string {
	GinkgoHelper()
	cmd := exec.Command("/usr/bin/kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "HOME="+GinkgoT().TempDir())
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %v: %s", args, out)
	return string(out)
}

// convergeErr runs the CLI expecting it to fail and returns its stderr.
func convergeErr(args ...string) string {
	GinkgoHelper()
	var out, errOut bytes.Buffer
	code := cli.Execute(context.Background(), append(args, "--kubeconfig", env.Kubeconfig), &out, &errOut)
	Expect(code).NotTo(BeZero(), "converge %v succeeded: %s", args, out.String())
	return errOut.String()
}
