package node

import (
	"github.com/converge-dev/converge/builtin/node/stats"
)

// newSampler measures the containers of the agent's pod workers.
func (a *Agent) newSampler() (*stats.Sampler, error) {
	return stats.New(stats.Options{
		NodeName: a.opts.NodeName, Runtime: a.rt, Interval: a.opts.StatsInterval,
		Logger: a.log.WithName("stats"), Pods: a.runningContainers,
	})
}

// runningContainers lists every pod worker's running containers.
func (a *Agent) runningContainers() []stats.Pod {
	a.mu.Lock()
	ws := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		ws = append(ws, w)
	}
	a.mu.Unlock()
	out := make([]stats.Pod, 0, len(ws))
	for _, w := range ws {
		w.mu.Lock()
		pod, start := w.pod, w.startTime
		w.mu.Unlock()
		p := stats.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, StartTime: start.Time}
		for _, cr := range w.runners() {
			cr.mu.Lock()
			if cr.running && cr.id != "" {
				c := stats.Container{Name: cr.c.Name, ID: cr.id}
				if r := cr.status.State.Running; r != nil {
					c.StartTime = r.StartedAt.Time
				}
				p.Containers = append(p.Containers, c)
			}
			cr.mu.Unlock()
		}
		if len(p.Containers) > 0 {
			out = append(out, p)
		}
	}
	return out
}
