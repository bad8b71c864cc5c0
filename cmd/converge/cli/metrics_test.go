package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

// scrapeUntil scrapes url with the Prometheus text parser until every family
// in want is there (or 60 s passed) and returns the families.
func scrapeUntil(t *testing.T, url string, want []string, exited <-chan int, out fmt.Stringer) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var missing []string
	var last string
	for {
		missing = nil
		resp, err := http.Get(url)
		if err == nil {
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, perr := p.TextToMetricFamilies(resp.Body)
			resp.Body.Close()
			if perr != nil {
				t.Fatalf("%s: not Prometheus text: %v", url, perr)
			}
			for _, w := range want {
				if fams[w] == nil {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 {
				return fams
			}
			last = fmt.Sprintf("status %d", resp.StatusCode)
		} else {
			last = err.Error()
		}
		select {
		case c := <-exited:
			t.Fatalf("the command exited with %d:\n%s", c, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never served %v (%s)\n%s", url, missing, last, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var (
	controllerManagerFamilies = []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds",
		"workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds"}
	schedulerFamilies = []string{"scheduler_pending_pods", "scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds"}
)

// createUnschedulablePod creates a pod that no node can take, so that the
// scheduler makes attempts.
func createUnschedulablePod(t *testing.T, ctx context.Context, kubeconfig string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "pod.yaml")
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: waits, namespace: default}\nspec: {containers: [{name: c, image: busybox}]}\n"
	if err := os.WriteFile(f, []byte(pod), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var out, errOut syncBuffer
		if Execute(ctx, []string{"apply", "--kubeconfig", kubeconfig, "-f", f}, &out, &errOut) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("apply the pod: %s%s", &out, &errOut)
		}
		time.Sleep(500 * time.Millisecond) // the default ServiceAccount comes a moment after the namespace
	}
}

// TestUpServesComponentMetrics: `converge up` serves the controller
// manager's (controller-runtime, workqueue) and the scheduler's metrics, each
// on its own address as the split commands do.
func TestUpServesComponentMetrics(t *testing.T) {
	t.Parallel()
	var (
		dir, kc   string
		cm, sched int
		ctx       context.Context
		done      chan int
		errOut    *syncBuffer
	)
	// A port freePort chose may be taken by another test before converge
	// up binds it: then converge up exits and the test tries other ports.
	for attempt := 1; ; attempt++ {
		dir = t.TempDir()
		cm, sched = freePort(t), freePort(t)
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(t.Context())
		d, out, eo := make(chan int, 1), &syncBuffer{}, &syncBuffer{}
		done, errOut = d, eo
		args := []string{"up", "--data-dir", dir, "--port", fmt.Sprint(freePort(t)), "--no-node",
			"--controller-manager-metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", cm),
			"--scheduler-metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", sched)}
		go func() { d <- Execute(ctx, args, out, eo) }()
		kc = filepath.Join(dir, "kubeconfig")
		exited := false
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if _, err := os.Stat(kc); err == nil {
				break
			}
			select {
			case code := <-d:
				exited = true
				d <- code // for scrapeUntil and the cleanup
			default:
			}
			if exited && attempt < 3 && strings.Contains(eo.String(), "address already in use") {
				break
			}
			if exited || time.Now().After(deadline) {
				cancel()
				t.Fatalf("converge up wrote no kubeconfig:\n%s%s", out, eo)
			}
		}
		if exited {
			cancel()
			continue
		}
		t.Cleanup(func() {
			cancel()
			<-d
		})
		break
	}
	createUnschedulablePod(t, ctx, kc)
	scrapeUntil(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", cm), controllerManagerFamilies, done, errOut)
	scrapeUntil(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", sched), schedulerFamilies, done, errOut)
}

// runComponent starts a secure control plane and, against its kubeconfig,
// `converge <args> --kubeconfig KC --leader-elect=false`, stopped when the
// test ends; it returns the command's exit channel and output.
func runComponent(t *testing.T, args ...string) (<-chan int, *syncBuffer) {
	t.Helper()
	_, kc := startSecureControlPlane(t)
	return runCommand(t, append(args, "--kubeconfig", kc, "--leader-elect=false")...)
}

// startSecureControlPlane starts a secure control plane in a temporary data
// directory, closed when the test ends, and returns the directory and the
// kubeconfig written into it.
func startSecureControlPlane(t *testing.T) (dir, kc string) {
	t.Helper()
	dir = t.TempDir()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{DataDir: dir, NoFsync: true, Secure: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	kc = filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	return dir, kc
}

// runCommand runs `converge <args>` until the test ends and returns its exit
// channel and output.
func runCommand(t *testing.T, args ...string) (<-chan int, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	out := &syncBuffer{}
	go func() { done <- Execute(ctx, args, out, out) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return done, out
}

// TestControllerManagerServesMetrics: `converge controller-manager` serves
// controller-runtime's and the workqueue's metrics on /metrics.
func TestControllerManagerServesMetrics(t *testing.T) {
	t.Parallel()
	metrics := freePort(t)
	done, out := runComponent(t, "controller-manager", "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics), "--health-probe-bind-address", "")
	scrapeUntil(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), controllerManagerFamilies, done, out)
}

// TestSchedulerServesMetrics: `converge scheduler` serves the scheduler's and
// controller-runtime's metrics on /metrics and its health on /healthz, as
// kube-scheduler does on its secure port.
func TestSchedulerServesMetrics(t *testing.T) {
	t.Parallel()
	metrics, health := freePort(t), freePort(t)
	done, out := runComponent(t, "scheduler", "--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", health))
	scrapeUntil(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), []string{"scheduler_pending_pods"}, done, out)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", health))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
}

// TestSplitNodeServesKubeletMetrics: the split node agent, `converge node`
// against a secure control plane, serves the kubelet's metric names on its
// HTTPS port (the Node's kubeletEndpoint) to who may get nodes/metrics, as the
// node agent of `converge up` does: a client certificate of the cluster CA in
// system:masters gets them; no credentials and an unknown bearer token get
// 401, a cluster-CA certificate of a user without nodes/metrics 403.
func TestSplitNodeServesKubeletMetrics(t *testing.T) {
	t.Parallel()
	dir, kc := startSecureControlPlane(t)
	ctx := t.Context()
	done, out := runCommand(t, "node", "--kubeconfig", kc, "--name", "split-metrics", "--root-dir", filepath.Join(dir, "node"))

	// The node agent's port, from its Node's status.
	var port int
	for deadline := time.Now().Add(60 * time.Second); port == 0; time.Sleep(200 * time.Millisecond) {
		var got, errOut syncBuffer
		if Execute(ctx, []string{"get", "node", "split-metrics", "--kubeconfig", kc, "-o", "json"}, &got, &errOut) == 0 {
			var n struct {
				Status struct {
					DaemonEndpoints struct {
						KubeletEndpoint struct{ Port int } `json:"kubeletEndpoint"`
					} `json:"daemonEndpoints"`
				} `json:"status"`
			}
			if err := json.Unmarshal([]byte(got.String()), &n); err != nil {
				t.Fatalf("converge get node: %v\n%s", err, &got)
			}
			port = n.Status.DaemonEndpoints.KubeletEndpoint.Port
		}
		select {
		case c := <-done:
			t.Fatalf("converge node exited with %d:\n%s", c, out)
		default:
		}
		if port == 0 && time.Now().After(deadline) {
			t.Fatalf("the node registered no kubelet endpoint (%s):\n%s", &errOut, out)
		}
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	scrape := func(certs []tls.Certificate, token string) (int, map[string]*dto.MetricFamily) {
		t.Helper()
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{ //nolint:gosec // the node's certificate is self-signed
			InsecureSkipVerify: true, Certificates: certs}}}
		defer hc.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("scrape %s: %v", url, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, nil
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatalf("%s: not Prometheus text: %v", url, err)
		}
		return resp.StatusCode, fams
	}

	cfg, _, err := kubeconfig.DefaultEnvironment().Load(kc, "")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.X509KeyPair(cfg.TLS.CertData, cfg.TLS.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	code, fams := scrape([]tls.Certificate{admin}, "")
	if code != http.StatusOK {
		t.Fatalf("an admin's scrape: %d, want 200", code)
	}
	for _, want := range []string{"kubelet_running_pods", "kubelet_running_containers", "kubelet_pod_start_duration_seconds"} {
		if fams[want] == nil {
			t.Errorf("the split node's /metrics has no %s", want)
		}
	}

	p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
	if err != nil {
		t.Fatal(err)
	}
	aliceCert, aliceKey, err := p.IssueClientCert("alice", []string{"monitoring"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := tls.X509KeyPair(aliceCert, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who   string
		certs []tls.Certificate
		token string
		want  int
	}{
		{"no credentials", nil, "", http.StatusUnauthorized},
		{"an unknown token", nil, "not-a-token", http.StatusUnauthorized},
		{"alice, without nodes/metrics", []tls.Certificate{alice}, "", http.StatusForbidden},
	} {
		if code, _ := scrape(c.certs, c.token); code != c.want {
			t.Errorf("%s: %d, want %d", c.who, code, c.want)
		}
	}
}
