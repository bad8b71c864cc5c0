package run_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/internal/e2etool"
	"github.com/converge-dev/converge/operators/examples/greeting"
	"github.com/converge-dev/converge/operators/run"
	"github.com/converge-dev/converge/testenv"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	o, err := run.ParseFlags("x", []string{"--kubeconfig", "/k", "--leader-elect=false", "--metrics-bind-address", "0"}, io.Discard)
	if err != nil || o.Kubeconfig != "/k" || !o.DisableLeaderElection || o.MetricsBindAddress != "0" {
		t.Fatalf("ParseFlags: %+v, %v", o, err)
	}
	o, err = run.ParseFlags("x", []string{"--webhook-bind-address", ":9443", "--webhook-host", "op.example.com", "--cert-dir", "/certs"}, io.Discard)
	if err != nil || o.WebhookBindAddress != ":9443" || o.WebhookHost != "op.example.com" || o.CertDir != "/certs" {
		t.Fatalf("ParseFlags (webhooks): %+v, %v", o, err)
	}
	if _, err := run.ParseFlags("x", []string{"extra"}, io.Discard); err == nil {
		t.Fatal("ParseFlags accepted a positional argument")
	}
}

// TestRunStandalone runs the greeting operator in-process through Run, with
// leader election, metrics and health endpoints, against a testenv.
func TestRunStandalone(t *testing.T) {
	t.Parallel()
	env := testenv.StartT(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	started := make(chan *manager.Manager, 1)
	done := make(chan error, 1)
	log := logr.Discard()
	go func() {
		done <- run.Run(ctx, greeting.New(), run.Options{
			Kubeconfig: env.Kubeconfig, MetricsBindAddress: "127.0.0.1:0", HealthProbeBindAddress: "127.0.0.1:0",
			Logger: &log, Started: func(m *manager.Manager) { started <- m },
		})
	}()
	var mgr *manager.Manager
	select {
	case mgr = <-started:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	c := newClient(t, env.Kubeconfig)
	create(ctx, t, c, "standalone", "hello")

	for !mgr.IsLeader() || mgr.HealthProbeAddr() == "" || mgr.MetricsAddr() == "" {
		time.Sleep(20 * time.Millisecond)
	}
	expectGet(t, "http://"+mgr.HealthProbeAddr()+"/healthz", "ok")
	expectGet(t, "http://"+mgr.MetricsAddr()+"/metrics", `controller_runtime_reconcile_total{controller="greeting"`)
	lease := &api.Unstructured{Object: map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "greeting-operator"}, lease); err != nil {
		t.Errorf("leader election Lease: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
}

// TestMainBinary builds the sample's main package (which calls run.Main) and
// runs it with its flags against a testenv, as `converge operator run` does.
func TestMainBinary(t *testing.T) {
	t.Parallel()
	env := testenv.StartT(t, testenv.Options{})
	bin := filepath.Join(t.TempDir(), "greeting")
	build := exec.Command("go", "build", "-o", bin, "../examples/greeting/plugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	health := freeAddr(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--metrics-bind-address", "0",
		"--health-probe-bind-address", health, "--leader-election-namespace", "kube-system")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, env.Kubeconfig)
	create(ctx, t, c, "binary", "from main")
	expectGet(t, "http://"+health+"/readyz", "ok")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("operator exited with %v\n%s", err, stderr.String())
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := e2etool.FreeAddr("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func expectGet(t *testing.T, url, want string) {
	t.Helper()
	var body string
	for range 100 {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if resp.StatusCode == http.StatusOK && strings.Contains(body, want) {
				return
			}
		} else {
			body = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("GET %s: %.300s\nwant %q", url, body, want)
}

func newClient(t *testing.T, path string) *client.Client {
	t.Helper()
	cfg, _, err := kubeconfig.LoadKubeconfig(path, "")
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

// create makes a Greeting once its CRD is served and waits until it is reconciled.
func create(ctx context.Context, t *testing.T, c *client.Client, name, msg string) {
	t.Helper()
	g := &greeting.Greeting{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name}, Spec: greeting.GreetingSpec{Message: msg}}
	var last error
	for {
		if last == nil || !strings.Contains(last.Error(), "exists") {
			if err := c.Create(ctx, g); err == nil || strings.Contains(err.Error(), "exists") {
				last = fmt.Errorf("exists")
			} else {
				last = err
			}
		}
		if last != nil && last.Error() == "exists" {
			cm := &corev1.ConfigMap{}
			live := &greeting.Greeting{}
			if c.Get(ctx, client.ObjectKey{Namespace: "default", Name: greeting.ConfigMapName(name)}, cm) == nil &&
				cm.Data["message"] == msg && c.Get(ctx, client.ObjectKeyFromObject(g), live) == nil &&
				controllerutil.IsStatusConditionTrue(live.Status.Conditions, "Ready") {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("greeting %s not reconciled (last: %v)", name, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
