package loader_test

// These tests load real plugins into a real host binary. go test binaries are
// built differently from plugins, so the test process never calls
// plugin.Open itself: it builds operators/internal/testhost once (a cgo
// binary like converge) and drives it.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators/examples/greeting"
	"github.com/converge-dev/converge/operators/loader"
	"github.com/converge-dev/converge/testenv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

var work string // shared temp dir for binaries and plugins

func TestMain(m *testing.M) {
	var err error
	work, err = os.MkdirTemp("", "converge-loader-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(work)
	os.Exit(code)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// once runs build at most once per key for the whole test binary.
var (
	onceMu sync.Mutex
	onces  = map[string]*onceResult{}
)

type onceResult struct {
	once sync.Once
	path string
	err  error
}

func fixture(t *testing.T, key string, build func() (string, error)) string {
	t.Helper()
	onceMu.Lock()
	r, ok := onces[key]
	if !ok {
		r = &onceResult{}
		onces[key] = r
	}
	onceMu.Unlock()
	r.once.Do(func() {
		start := time.Now()
		r.path, r.err = build()
		t.Logf("fixture %s built in %s", key, time.Since(start).Round(time.Millisecond))
	})
	if r.err != nil {
		t.Fatalf("fixture %s: %v", key, r.err)
	}
	return r.path
}

func goCmd(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func testHost(t *testing.T) string {
	root := repoRoot(t)
	return fixture(t, "testhost", func() (string, error) {
		out := filepath.Join(work, "testhost")
		return out, goCmd(root, []string{"CGO_ENABLED=1"}, "build", "-o", out, "./operators/internal/testhost")
	})
}

// greetingPlugin is the sample operator built by operators/build (run by the
// host binary, exactly like `converge operator build`).
func greetingPlugin(t *testing.T) string {
	host := testHost(t)
	root := repoRoot(t)
	return fixture(t, "greeting.so", func() (string, error) {
		out := filepath.Join(work, "greeting.so")
		b, err := exec.Command(host, "build", filepath.Join(root, "operators/examples/greeting"), out).CombinedOutput()
		if err != nil || !bytes.Contains(b, []byte("BUILT")) {
			return "", fmt.Errorf("testhost build: %v\n%s", err, b)
		}
		return out, nil
	})
}

// smallPlugin builds a tiny plugin module in a temp dir.
func smallPlugin(t *testing.T, name, gomod, main string, flags ...string) string {
	return fixture(t, name, func() (string, error) {
		dir := filepath.Join(work, "src-"+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
			return "", err
		}
		out := filepath.Join(work, name)
		args := append([]string{"build", "-buildmode=plugin", "-o", out}, flags...)
		return out, goCmd(dir, []string{"CGO_ENABLED=1", "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false"}, append(args, ".")...)
	})
}

// uuidPlugin shares github.com/google/uuid with the host at another version.
func uuidPlugin(t *testing.T) string {
	return smallPlugin(t, "uuid15.so", "module example.com/uuidop\n\ngo 1.26\n\nrequire github.com/google/uuid v1.5.0\n",
		"package main\n\nimport \"github.com/google/uuid\"\n\nvar New = uuid.NewString\n\nfunc main() {}\n")
}

func racePlugin(t *testing.T) string {
	return smallPlugin(t, "race.so", "module example.com/raceop\n\ngo 1.26\n",
		"package main\n\nvar Operator = 1\n\nfunc main() {}\n", "-race")
}

func runHost(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(testHost(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("testhost %s: %v (the host must not crash)\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestRefusesDifferentDependencyVersion(t *testing.T) {
	t.Parallel()
	out := runHost(t, "load", uuidPlugin(t))
	want := "module github.com/google/uuid differs (converge: github.com/google/uuid@v1.6.0, plugin: github.com/google/uuid@v1.5.0); " +
		"rebuild it with this converge: converge operator build DIR (the directory of example.com/uuidop) -o uuid15.so"
	if !strings.Contains(out, "REFUSED") || !strings.Contains(out, want) || strings.Contains(out, "plugin was built with") {
		t.Fatalf("load output:\n%s\nwant REFUSED ... %s", out, want)
	}
}

func TestRefusesDifferentRaceSetting(t *testing.T) {
	t.Parallel()
	out := runHost(t, "load", racePlugin(t))
	if !strings.Contains(out, "REFUSED") || !strings.Contains(out, "-race differs (converge: false, plugin: true)") ||
		!strings.Contains(out, "converge operator build") {
		t.Fatalf("load output:\n%s", out)
	}
}

func TestLoadsBuiltPluginOnce(t *testing.T) {
	t.Parallel()
	so := greetingPlugin(t)
	// The same file through another spelling of its path is loaded once.
	alias := filepath.Join(filepath.Dir(so), ".", "..", filepath.Base(filepath.Dir(so)), filepath.Base(so))
	out := runHost(t, "load", so, alias)
	if strings.Count(out, "LOADED greeting") != 2 || strings.Contains(out, "REFUSED") {
		t.Fatalf("load output:\n%s", out)
	}
}

// TestPluginReconcilesInHost loads the greeting plugin (and a bad one) into
// the host binary running against a testenv and checks that the CR is
// reconciled, the bad operator is reported and the good one unaffected.
func TestPluginReconcilesInHost(t *testing.T) {
	t.Parallel()
	so, bad := greetingPlugin(t), racePlugin(t)
	env := testenv.StartT(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	cmd := exec.CommandContext(ctx, testHost(t), "run", env.Kubeconfig, bad, so)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("host stderr:\n%s", stderr.String())
		}
	}()
	lines := bufio.NewScanner(stdout)
	var head []string
	for lines.Scan() {
		head = append(head, lines.Text())
		if lines.Text() == "STARTED" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	joined := strings.Join(head, "\n")
	if !strings.Contains(joined, "OPERATOR  Failed") || !strings.Contains(joined, "-race differs") ||
		!strings.Contains(joined, "OPERATOR greeting Running") {
		t.Fatalf("host output:\n%s", joined)
	}

	c := newClient(t, env.Kubeconfig)
	reports, err := loader.ReadReports(ctx, c)
	if err != nil || len(reports) != 2 {
		t.Fatalf("ReadReports: %v, %+v", err, reports)
	}

	g := &greeting.Greeting{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "hello"},
		Spec: greeting.GreetingSpec{Message: "hi from a plugin"}}
	if err := c.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	waitReconciled(ctx, t, c, g, "hi from a plugin")
}

func newClient(t *testing.T, kubeconfigPath string) *client.Client {
	t.Helper()
	cfg, _, err := kubeconfig.LoadKubeconfig(kubeconfigPath, "")
	if err != nil {
		t.Fatal(err)
	}
	s := scheme.New()
	if err := greeting.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitReconciled waits for g's ConfigMap, finalizer and Ready condition.
func waitReconciled(ctx context.Context, t *testing.T, c *client.Client, g *greeting.Greeting, msg string) {
	t.Helper()
	var last string
	for {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: greeting.ConfigMapName(g.Name)}, cm)
		if err == nil && cm.Data["message"] == msg && controllerutil.GetControllerOf(cm) != nil {
			live := &greeting.Greeting{}
			if err = c.Get(ctx, client.ObjectKeyFromObject(g), live); err == nil &&
				controllerutil.IsStatusConditionTrue(live.Status.Conditions, "Ready") &&
				controllerutil.ContainsFinalizer(live, greeting.Finalizer) {
				return
			}
		}
		last = fmt.Sprint(err)
		select {
		case <-ctx.Done():
			t.Fatalf("greeting %s not reconciled: %s", g.Name, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
