package dashboard

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the screenshots to docs/dashboard/ (else a temporary directory)")

// chromiumPath is Debian's chromium (hack/ci-deps.sh installs it).
const chromiumPath = "/usr/bin/chromium"

// kubectlPath is the real kubectl.
const kubectlPath = "/usr/bin/kubectl"

// viewerToken authenticates the user "viewer" (static token file), whom the
// suite binds to the view ClusterRole.
const viewerToken = "viewer-token-0123456789"

func TestDashboard(t *testing.T) {
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if suiteConfig.Timeout > 3*time.Minute {
		suiteConfig.Timeout = 3 * time.Minute
	}
	RunSpecs(t, "dashboard in a browser", suiteConfig, reporterConfig)
}

var suite struct {
	cp         *controlplane.ControlPlane
	c          *client.Client
	kubeconfig string
	browser    context.Context // a chromedp context (one tab)
	shots      string          // where screenshots go
}

var _ = BeforeSuite(func(ctx SpecContext) {
	_, err := os.Stat(chromiumPath)
	Expect(err).NotTo(HaveOccurred(), "this suite needs Debian's chromium at %s (hack/ci-deps.sh installs it)", chromiumPath)
	_, err = os.Stat(kubectlPath)
	Expect(err).NotTo(HaveOccurred(), "this suite needs kubectl at %s", kubectlPath)

	dir := GinkgoT().TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	Expect(os.WriteFile(tokens, []byte(viewerToken+",viewer,uid-viewer\n"), 0o600)).To(Succeed())
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir: filepath.Join(dir, "data"), NoFsync: true, CompactionInterval: -1, Logger: GinkgoLogr.V(1),
		Secure: true, TokenFile: tokens, LocalNode: true, Controllers: []string{"*"}, Scheduler: true,
		// Pod IPs outside every other suite's range (testenv takes 127.16-95,
		// converge up 127.10) and a Service range of its own: the service proxy
		// listens on cluster IPs on this machine, beside parallel test binaries.
		PodCIDR: "127.8.0.0/16", ServiceCIDR: testenv.ServiceCIDR(),
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cp.Close()).To(Succeed()) })
	suite.cp = cp
	suite.kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(cp.WriteKubeconfig(suite.kubeconfig)).To(Succeed())
	cfg, err := cp.ClientConfig("dashboard-e2e")
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(cfg, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	suite.shots = GinkgoT().TempDir()
	if *updateScreenshots {
		suite.shots, err = filepath.Abs("../../../docs/dashboard")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.MkdirAll(suite.shots, 0o755)).To(Succeed())
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800), chromedp.Flag("ignore-certificate-errors", true), chromedp.DisableGPU,
		chromedp.UserDataDir(filepath.Join(dir, "chromium")))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc, chromedp.WithLogf(GinkgoWriter.Printf))
	DeferCleanup(func() { cancelBrowser(); cancelAlloc() })
	// The first Run starts the browser; its context must outlive the suite.
	Expect(chromedp.Do(browser, chromedp.EmulateViewport(1280, 800))).To(Succeed())
	suite.browser = browser
	// Uncaught exceptions and console errors in the page fail the suite:
	// a CSP violation or a script error would otherwise pass unseen.
	var mu sync.Mutex
	var pageErrors []string
	Expect(chromedp.Listen(browser, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			pageErrors = append(pageErrors, fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
		case *cdpruntime.EventConsoleAPICalled:
			if e.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				pageErrors = append(pageErrors, "console.error: "+strings.Join(parts, " "))
			}
		}
	})).To(Succeed())
	DeferCleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		Expect(pageErrors).To(BeEmpty(), "errors in the page")
	})
}, NodeTimeout(90*time.Second))

// do runs browser actions with a deadline.
func do(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	GinkgoHelper()
	tctx, cancel := context.WithTimeout(suite.browser, 30*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	Expect(chromedp.Do(tctx, actions...)).To(Succeed())
}

// waitFor polls a JavaScript expression in the page until it is truthy.
func waitFor(ctx context.Context, what, expr string, timeout time.Duration) {
	GinkgoHelper()
	tctx, cancel := context.WithTimeout(suite.browser, timeout+5*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if _, err := chromedp.Run(tctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(timeout))); err != nil {
		html, _ := chromedp.Run(suite.browser, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
		Fail(fmt.Sprintf("%s: %v\npage:\n%s", what, err, html))
	}
}

// eval evaluates expr in the page.
func eval[T any](expr string, opts ...chromedp.EvaluateOption) T {
	GinkgoHelper()
	v, err := chromedp.Run(suite.browser, chromedp.Evaluate[T](expr, opts...))
	Expect(err).NotTo(HaveOccurred(), expr)
	return v
}

// screenshot saves the viewport as name.png.
func screenshot(name string) {
	GinkgoHelper()
	b, err := chromedp.Run(suite.browser, chromedp.CaptureScreenshot())
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(suite.shots, name+".png"), b, 0o644)).To(Succeed())
}

func kubectl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	cmd := exec.CommandContext(ctx, kubectlPath, append([]string{"--kubeconfig", suite.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+GinkgoT().TempDir())
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl %v: %s", args, out)
	return string(out)
}
