package node

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/kubeletmetrics"
)

// Metrics is the registry the agent serves at /metrics.
func (a *Agent) Metrics() http.Handler {
	return promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{})
}

// runningCounts counts the pods with a sandbox and their containers by state
// for kubelet_running_pods and kubelet_running_containers.
func (a *Agent) runningCounts() kubeletmetrics.Counts {
	a.mu.Lock()
	workers := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		workers = append(workers, w)
	}
	a.mu.Unlock()
	c := kubeletmetrics.Counts{Containers: map[string]int{}}
	for _, w := range workers {
		w.mu.Lock()
		sandbox := w.sandboxOK && !w.killed
		runners := append(append([]*containerRunner{}, w.inits...), w.ctrs...)
		w.mu.Unlock()
		if sandbox {
			c.Pods++
		}
		for _, r := range runners {
			r.mu.Lock()
			switch {
			case r.running:
				c.Containers["running"]++
			case r.id != "" && r.status.State.Terminated != nil:
				c.Containers["exited"]++
			case r.id != "":
				c.Containers["unknown"]++
			}
			r.mu.Unlock()
		}
	}
	return c
}

// The runtime calls, each recorded in kubelet_runtime_operations_*.

func (a *Agent) startContainer(ctx context.Context, spec cri.ContainerSpec) (string, error) {
	t := time.Now()
	if _, ok := a.rt.(cri.SpecFinisher); !ok && spec.Finish != nil {
		if err := spec.Finish(ctx, &spec); err != nil {
			return "", err
		}
		spec.Finish = nil
	}
	id, err := a.rt.Start(ctx, spec)
	a.metrics.RuntimeOperation(kubeletmetrics.OpStartContainer, t, err)
	return id, err
}

func (a *Agent) stopContainer(ctx context.Context, id string, grace time.Duration) error {
	t := time.Now()
	err := a.rt.Stop(ctx, id, grace)
	a.metrics.RuntimeOperation(kubeletmetrics.OpStopContainer, t, err)
	return err
}

func (a *Agent) removeContainer(ctx context.Context, id string) error {
	t := time.Now()
	err := a.rt.Remove(ctx, id)
	a.metrics.RuntimeOperation(kubeletmetrics.OpRemoveContainer, t, err)
	return err
}

func (a *Agent) execSync(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	t := time.Now()
	code, out, err := a.rt.Exec(ctx, id, cmd)
	a.metrics.RuntimeOperation(kubeletmetrics.OpExecSync, t, err)
	return code, out, err
}
