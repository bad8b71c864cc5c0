package operator_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/internal/e2etool"
	"github.com/converge-dev/converge/operators/examples/greeting"
	"github.com/converge-dev/converge/operators/loader"
	"github.com/converge-dev/converge/operators/postgres"
)

func TestOperator(t *testing.T) {
	RegisterFailHandler(Fail)
	if !RunSpecs(t, "Operator plugins in converge up") {
		// After Ginkgo's summary, where a CI log's tail shows it: what the
		// plugins reported and converge up's last lines about operators.
		for _, r := range suite.reports {
			fmt.Printf("operator report: %s %s %s: %s\n", r.State, r.Name, filepath.Base(r.Path), r.Error)
		}
		if suite.output != nil {
			var lines []string
			for _, l := range strings.Split(suite.output.String(), "\n") {
				if strings.Contains(strings.ToLower(l), "operator") || strings.Contains(l, "postgres") {
					lines = append(lines, l)
				}
			}
			for _, l := range lines[max(0, len(lines)-15):] {
				fmt.Println("converge up:", l)
			}
		}
	}
}

const pgBin = "/usr/lib/postgresql/15/bin"

// suite is the shared state set up in BeforeSuite: one `converge up` with
// every plugin of the suite.
var suite struct {
	root, work string
	bin        string            // the converge binary
	plugins    map[string]string // name -> .so
	up         *exec.Cmd
	output     *lockedBuffer // converge up's stdout and stderr
	banner     string        // converge up's stdout up to "is ready at"
	url        string
	kubeconfig string
	c          *client.Client
	reports    []loader.Report // the operator reports `converge status` printed last
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// run runs a command in dir and returns its combined output; it fails the
// suite when the command fails.
func run(dir string, env []string, name string, args ...string) string {
	GinkgoHelper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), out)
	GinkgoWriter.Printf("%s %s: %s\n", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(out)
}

// operatorBuild builds the operator in dir with `converge operator build`.
func operatorBuild(dir, name string) string {
	GinkgoHelper()
	so := filepath.Join(suite.work, name+".so")
	out := run(suite.root, []string{"CONVERGE_SRC=" + suite.root}, suite.bin, "operator", "build", dir, "-o", so)
	Expect(out).To(ContainSubstring("Built "))
	return so
}

// smallPlugin builds a one-file plugin module with the plain go command (not
// converge operator build), with extra go build flags.
func smallPlugin(name, gomod, main string, flags ...string) string {
	GinkgoHelper()
	dir := filepath.Join(suite.work, "src-"+name)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644)).To(Succeed())
	so := filepath.Join(suite.work, name+".so")
	args := append([]string{"build", "-buildmode=plugin", "-o", so}, flags...)
	run(dir, []string{"CGO_ENABLED=1", "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false"}, "go", append(args, ".")...)
	return so
}

// forgeGoVersion copies the plugin at src to dst with the Go version in its
// build info header rewritten from the toolchain's (goX.Y.Z) to "go1.25"
// plus the same tail, as if another toolchain had built it.
func forgeGoVersion(src, dst string) {
	GinkgoHelper()
	b, err := os.ReadFile(src)
	Expect(err).NotTo(HaveOccurred())
	magic := []byte("\xff Go buildinf:")
	i := bytes.Index(b, magic)
	Expect(i).To(BeNumerically(">=", 0), "no build info in %s", src)
	// Header: 14 bytes magic, pointer size, flags, padding to 32 bytes, then
	// the varint-prefixed version string.
	header := b[i : i+64]
	j := bytes.Index(header, []byte("go1."))
	Expect(j).To(BeNumerically(">", 0))
	end := j + bytes.IndexAny(header[j+4:], ".\x00") + 4
	Expect(string(header[j:end])).NotTo(Equal("go1.25"))
	Expect(end-j).To(Equal(len("go1.25")), "version %q", header[j:end])
	copy(header[j:], "go1.25")
	Expect(os.WriteFile(dst, b, 0o644)).To(Succeed())
}

func freePort() int {
	GinkgoHelper()
	port, err := e2etool.FreePort()
	Expect(err).NotTo(HaveOccurred())
	return port
}

var _ = BeforeSuite(func(ctx SpecContext) {
	Expect(os.Geteuid()).To(Equal(0), "converge up's process runtime runs postgres as uid 101, which needs root")
	for _, b := range []string{"postgres", "initdb", "pg_isready"} {
		_, err := os.Stat(filepath.Join(pgBin, b))
		Expect(err).NotTo(HaveOccurred(), "PostgreSQL 15 server binaries are required in %s", pgBin)
	}
	_, err := exec.LookPath("psql")
	Expect(err).NotTo(HaveOccurred(), "psql is required on PATH (the postgres operator runs it)")

	suite.root, err = filepath.Abs("../../..")
	Expect(err).NotTo(HaveOccurred())
	Expect(filepath.Join(suite.root, "go.mod")).To(BeAnExistingFile())
	suite.work, err = os.MkdirTemp("", "converge-e2e-operator-")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chmod(suite.work, 0o755)).To(Succeed()) // postgres (uid 101) traverses it
	suite.bin = filepath.Join(suite.work, "converge")
	run(suite.root, []string{"CGO_ENABLED=1"}, "go", "build", "-o", suite.bin, "./cmd/converge")

	// The operators that must load.
	suite.plugins = map[string]string{"postgres": operatorBuild("./operators/postgres/plugin", "postgres")}
	out := run(suite.work, []string{"CONVERGE_SRC=" + suite.root}, suite.bin, "operator", "init", "memcached",
		"--group", "cache.example.com", "--version", "v1alpha1", "--kind", "Memcached")
	Expect(out).To(ContainSubstring("created "))
	suite.plugins["memcached"] = operatorBuild(filepath.Join(suite.work, "memcached"), "memcached")

	// The plugins that must be refused.
	suite.plugins["uuid"] = smallPlugin("uuid15", "module example.com/uuidop\n\ngo 1.26\n\nrequire github.com/google/uuid v1.5.0\n",
		"package main\n\nimport \"github.com/google/uuid\"\n\nvar New = uuid.NewString\n\nfunc main() {}\n")
	suite.plugins["race"] = smallPlugin("race", "module example.com/raceop\n\ngo 1.26\n",
		"package main\n\nvar Operator = 1\n\nfunc main() {}\n", "-race")
	tiny := smallPlugin("tiny", "module example.com/tinyop\n\ngo 1.26\n", "package main\n\nvar Operator = 1\n\nfunc main() {}\n")
	suite.plugins["toolchain"] = filepath.Join(suite.work, "go125.so")
	forgeGoVersion(tiny, suite.plugins["toolchain"])
	suite.plugins["bogus"] = filepath.Join(suite.work, "bogus.so")
	Expect(os.WriteFile(suite.plugins["bogus"], []byte("not a plugin"), 0o644)).To(Succeed())

	port := freePort()
	dataDir := filepath.Join(suite.work, "data")
	args := []string{"up", "--data-dir", dataDir, "--port", strconv.Itoa(port), "--pod-cidr", "127.55.0.0/16"}
	for _, name := range []string{"race", "postgres", "uuid", "memcached", "toolchain", "bogus"} {
		args = append(args, "--operator", suite.plugins[name])
	}
	suite.up = exec.Command(suite.bin, args...)
	suite.up.Dir = suite.work
	suite.output = &lockedBuffer{}
	suite.up.Stderr = suite.output
	stdout, err := suite.up.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(suite.up.Start()).To(Succeed())
	ready := make(chan string, 1)
	go func() {
		var head strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = suite.output.Write([]byte(sc.Text() + "\n"))
			if ready != nil {
				head.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "is ready at") {
					ready <- head.String()
					ready = nil
				}
			}
		}
	}()
	select {
	case suite.banner = <-ready:
	case <-time.After(90 * time.Second):
		Fail("converge up not ready within 90 s:\n" + suite.output.String())
	}
	suite.url = fmt.Sprintf("https://127.0.0.1:%d", port)
	suite.kubeconfig = filepath.Join(dataDir, "kubeconfig")

	cfg, _, err := kubeconfig.LoadKubeconfig(suite.kubeconfig, "")
	Expect(err).NotTo(HaveOccurred())
	s := scheme.New()
	for _, add := range []func(*scheme.Scheme) error{corev1.AddToScheme, greeting.AddToScheme, postgres.AddToScheme} {
		Expect(add(s)).To(Succeed())
	}
	suite.c, err = client.New(cfg, client.Options{Scheme: s})
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(15*time.Minute))

var _ = AfterSuite(func() {
	if suite.up != nil && suite.up.Process != nil {
		_ = suite.up.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- suite.up.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = suite.up.Process.Kill()
			<-done
			Fail("converge up did not stop within 60 s of SIGTERM")
		}
	}
	if suite.work != "" {
		_ = os.RemoveAll(suite.work)
	}
})

// On failure, show what converge up printed.
var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() && suite.output != nil {
		out := suite.output.String()
		if len(out) > 20000 {
			out = out[len(out)-20000:]
		}
		GinkgoWriter.Printf("converge up output (tail):\n%s\n", out)
	}
})

// eventually polls cond until it returns "" (success) or timeout passes; the
// last message is the failure.
func eventually(ctx context.Context, timeout time.Duration, cond func() string) {
	GinkgoHelper()
	var last string
	Eventually(ctx, func() bool { last = cond(); return last == "" }).WithTimeout(timeout).WithPolling(250*time.Millisecond).
		Should(BeTrue(), func() string { return last })
}
