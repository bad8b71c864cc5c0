package security

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/cmd/converge/cli"
	"github.com/converge-dev/converge/controlplane"
)

// cliEnv makes the test binary run as the converge CLI (see TestMain), so the
// two-process specs need no separate build.
const cliEnv = "CONVERGE_E2E_SECURITY_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// convergeCommand is an *exec.Cmd running `converge args...` in a process of its own.
func convergeCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	return cmd
}

func TestSecurity(t *testing.T) {
	RegisterFailHandler(Fail)
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultEventuallyTimeout(15 * time.Second)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if suiteConfig.Timeout > 4*time.Minute {
		suiteConfig.Timeout = 4 * time.Minute
	}
	RunSpecs(t, "security end-to-end suite", suiteConfig, reporterConfig)
}

// start runs a control plane on opts (DataDir required) and closes it when
// the spec ends.
func start(ctx context.Context, opts controlplane.Options) *controlplane.ControlPlane {
	opts.NoFsync, opts.CompactionInterval, opts.Logger = true, -1, GinkgoLogr
	cp, err := controlplane.Start(ctx, opts)
	Expect(err).NotTo(HaveOccurred(), "start control plane")
	DeferCleanup(func() { Expect(cp.Close()).To(Succeed()) })
	return cp
}

// reply is a decoded answer.
type reply struct {
	code   int
	header http.Header
	body   map[string]any
	raw    string
}

func (r reply) String() string { return http.StatusText(r.code) + " " + r.raw }

// call sends body (nil, string or anything JSON encodes) and decodes the answer.
func call(ctx context.Context, c *http.Client, method, url string, body any, hdr ...string) reply {
	GinkgoHelper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		js, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	Expect(err).NotTo(HaveOccurred())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	out := reply{code: resp.StatusCode, header: resp.Header, raw: string(b)}
	_ = json.Unmarshal(b, &out.body)
	return out
}

// kubectl runs the real kubectl (the dispatcher at /usr/bin/kubectl) with an
// isolated HOME against kubeconfig and returns its output and exit code.
func kubectl(ctx context.Context, kubeconfig string, args ...string) (string, int) {
	GinkgoHelper()
	home := GinkgoT().TempDir()
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--cache-dir=" + home + "/cache"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "KUBECONFIG=" + kubeconfig, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	Expect(err).NotTo(HaveOccurred(), "kubectl %v:\n%s", args, out)
	return string(out), 0
}
