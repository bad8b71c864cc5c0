package loader_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/operators/examples/greeting"
	"github.com/converge-dev/converge/operators/loader"
	"github.com/converge-dev/converge/testenv"
)

// dropPlugin copies src into dir as name the way `converge operator load`
// does (a hidden temporary file renamed into place), with modification
// time mod.
func dropPlugin(t *testing.T, src, dir, name string, mod time.Time) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp, dst := filepath.Join(dir, "."+name+".tmp"), filepath.Join(dir, name)
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mod, mod); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// startWatchHost runs `testhost watch` on dir and returns once it serves.
func startWatchHost(ctx context.Context, t *testing.T, kubeconfig, dir string) (head string, stop func()) {
	t.Helper()
	cmd := exec.CommandContext(ctx, testHost(t), "watch", kubeconfig, dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var out []string
	for lines.Scan() {
		out = append(out, lines.Text())
		if lines.Text() == "STARTED" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return strings.Join(out, "\n"), func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil || t.Failed() {
			t.Logf("host: %v\nstderr:\n%s", err, stderr.String())
		}
	}
}

// waitReport waits for the published report of the plugin at path.
func waitReport(ctx context.Context, t *testing.T, c *client.Client, path string) loader.Report {
	t.Helper()
	for {
		reports, err := loader.ReadReports(ctx, c)
		if err == nil {
			for _, r := range reports {
				if r.Path == path {
					return r
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no report for %s: %v %+v", path, err, reports)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestHotLoad drops plugins into the directory of a running host: a good
// one is loaded and reconciles without a restart, a bad one and a second
// build of a loaded operator are refused with their reason while the host
// keeps running; at the next start the newest build of an operator wins.
func TestHotLoad(t *testing.T) {
	t.Parallel()
	so, bad := greetingPlugin(t), racePlugin(t)
	env := testenv.StartT(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c := newClient(t, env.Kubeconfig)
	dir := t.TempDir()

	head, stop := startWatchHost(ctx, t, env.Kubeconfig, dir)
	if strings.Contains(head, "OPERATOR") {
		t.Fatalf("an empty directory loaded: %s", head)
	}
	dropped := time.Now()
	path := dropPlugin(t, so, dir, "greeting.so", dropped)
	g := &greeting.Greeting{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "hot"},
		Spec: greeting.GreetingSpec{Message: "loaded without a restart"}}
	for {
		// A fresh client each time: a client's discovery is cached, and
		// what is measured here is the host, not the client's refresh.
		obj := &greeting.Greeting{ObjectMeta: api.ObjectMeta{Namespace: g.Namespace, Name: g.Name}, Spec: g.Spec}
		err := newClient(t, env.Kubeconfig).Create(ctx, obj)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the Greeting kind never came: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	created := time.Since(dropped)
	for {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: greeting.ConfigMapName(g.Name)}, cm); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("no ConfigMap")
		case <-time.After(10 * time.Millisecond):
		}
	}
	firstReconcile := time.Since(dropped)
	waitReconciled(ctx, t, c, g, "loaded without a restart")
	t.Logf("after the drop: kind served and object created %s, its ConfigMap written (first reconcile) %s, Ready %s",
		created.Round(time.Millisecond), firstReconcile.Round(time.Millisecond), time.Since(dropped).Round(time.Millisecond))
	if firstReconcile > 5*time.Second {
		t.Errorf("first reconcile %s after the drop", firstReconcile)
	}
	r := waitReport(ctx, t, c, path)
	if r.State != loader.Running || r.Name != "greeting" || len(r.Controllers) == 0 || !strings.Contains(r.Build, "(go1.") {
		t.Fatalf("report %+v", r)
	}

	// A bad plugin is refused with its reason; the host keeps running.
	badPath := dropPlugin(t, bad, dir, "bad.so", time.Now())
	if r := waitReport(ctx, t, c, badPath); r.State != loader.Failed || !strings.Contains(r.Error, "-race differs") {
		t.Fatalf("bad plugin: %+v", r)
	}
	// A second build of a loaded operator needs a restart.
	again := dropPlugin(t, so, dir, "greeting-v2.so", time.Now())
	if r := waitReport(ctx, t, c, again); r.State != loader.Failed || !strings.Contains(r.Error, "restart") {
		t.Fatalf("second build: %+v", r)
	}
	g2 := &greeting.Greeting{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "still"},
		Spec: greeting.GreetingSpec{Message: "still running"}}
	if err := c.Create(ctx, g2); err != nil {
		t.Fatal(err)
	}
	waitReconciled(ctx, t, c, g2, "still running")
	// The reconcile counters are published.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := waitReport(ctx, t, c, path)
		if len(r.Controllers) > 0 && r.Controllers[0].Reconciles > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconcile counts in %+v", r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()

	// At start, of two builds of one operator the newest is loaded.
	_ = os.Remove(badPath)
	_ = os.Remove(again)
	_ = os.Chtimes(path, dropped.Add(-time.Hour), dropped.Add(-time.Hour))
	newer := dropPlugin(t, so, dir, "greeting-new.so", time.Now())
	head, stop = startWatchHost(ctx, t, env.Kubeconfig, dir)
	defer stop()
	if !strings.Contains(head, "OPERATOR greeting Running") || !strings.Contains(head, "Superseded superseded by the newer build "+newer) {
		t.Fatalf("restart with two builds:\n%s", head)
	}
}
