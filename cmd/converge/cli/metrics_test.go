package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/converge-dev/converge/controlplane"
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
	dir := t.TempDir()
	cm, sched := freePort(t), freePort(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	var out, errOut syncBuffer
	go func() {
		done <- Execute(ctx, []string{"up", "--data-dir", dir, "--port", fmt.Sprint(freePort(t)), "--no-node",
			"--controller-manager-metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", cm),
			"--scheduler-metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", sched)}, &out, &errOut)
	}()
	defer func() {
		cancel()
		<-done
	}()
	kc := filepath.Join(dir, "kubeconfig")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(kc); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("converge up wrote no kubeconfig:\n%s%s", &out, &errOut)
		}
	}
	createUnschedulablePod(t, ctx, kc)
	scrapeUntil(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", cm), controllerManagerFamilies, done, &errOut)
	scrapeUntil(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", sched), schedulerFamilies, done, &errOut)
}

// runComponent starts a secure control plane and, against its kubeconfig,
// `converge <args> --kubeconfig KC --leader-elect=false`, stopped when the
// test ends; it returns the command's exit channel and output.
func runComponent(t *testing.T, args ...string) (<-chan int, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{DataDir: dir, NoFsync: true, Secure: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	out := &syncBuffer{}
	go func() {
		done <- Execute(ctx, append(args, "--kubeconfig", kc, "--leader-elect=false"), out, out)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cp.Close()
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
