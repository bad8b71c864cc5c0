package stats

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
)

// Pod is a pod whose running containers the Sampler measures.
type Pod struct {
	Namespace, Name, UID string
	StartTime            time.Time
	Containers           []Container
}

// Container is a running container of a Pod.
type Container struct {
	// Name is the container's name in the pod; ID its runtime ID.
	Name, ID  string
	StartTime time.Time
}

// Options configure a Sampler. Pods and Runtime are required.
type Options struct {
	// NodeName is reported in the Summary.
	NodeName string
	// Pods lists the pods to measure at each reading.
	Pods func() []Pod
	// Runtime measures containers; a runtime that is not a cri.StatsProvider
	// reports node figures only.
	Runtime cri.Runtime
	// Host reads the node's totals (default: ReadHost, this machine's).
	Host func() (Reading, error)
	// Interval between readings (default 10 s, cadvisor's housekeeping).
	Interval time.Duration
	// Logger receives read failures at V(1).
	Logger logr.Logger
}

// Reading is one cumulative measurement.
type Reading struct {
	Time          time.Time
	CPUNanos      uint64
	WorkingSet    uint64
	hasWorkingSet bool
}

// pair holds the last two readings of one thing, newest in cur.
type pair struct {
	prev, cur Reading
	n         int
}

func (p *pair) add(r Reading) {
	p.prev, p.cur = p.cur, r
	p.n++
}

// rate is the CPU rate over the last window in nanocores, and the window.
func (p *pair) rate() (*uint64, float64) {
	if p.n < 2 {
		return nil, 0
	}
	dt := p.cur.Time.Sub(p.prev.Time)
	if dt <= 0 {
		return nil, 0
	}
	var v uint64
	if p.cur.CPUNanos > p.prev.CPUNanos { // a counter that stepped back reads as idle
		v = uint64(float64(p.cur.CPUNanos-p.prev.CPUNanos) / dt.Seconds())
	}
	return &v, dt.Seconds()
}

// Sampler reads usage periodically. Create it with New, run it with Start.
type Sampler struct {
	opts  Options
	stats cri.StatsProvider // nil when the runtime cannot measure

	mu         sync.Mutex
	node       pair             // guarded by mu
	containers map[string]*pair // by runtime container ID; guarded by mu
	pods       []Pod            // the pods of the last reading; guarded by mu
}

// New validates opts and returns a Sampler.
func New(opts Options) (*Sampler, error) {
	var errs []error
	if opts.Pods == nil {
		errs = append(errs, errors.New("stats: Pods is required"))
	}
	if opts.Runtime == nil {
		errs = append(errs, errors.New("stats: Runtime is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Interval <= 0 {
		opts.Interval = 10 * time.Second
	}
	if opts.Host == nil {
		opts.Host = ReadHost
	}
	s := &Sampler{opts: opts, containers: map[string]*pair{}}
	s.stats, _ = opts.Runtime.(cri.StatsProvider)
	return s, nil
}

// firstRateDelay is how soon a second reading follows a first one (of the
// node or of a new container), so that a rate exists before a whole Interval.
const firstRateDelay = time.Second

// Start reads usage every Interval until ctx ends, and firstRateDelay after
// a reading that saw something for the first time.
func (s *Sampler) Start(ctx context.Context) error {
	for {
		wait := s.opts.Interval
		if s.Sample(ctx) {
			wait = min(wait, firstRateDelay)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sample takes one reading of the node and of every running container. It
// reports whether something had its first reading (and so no rate yet).
func (s *Sampler) Sample(ctx context.Context) (first bool) {
	host, herr := s.opts.Host()
	if herr != nil {
		s.opts.Logger.V(1).Info("Cannot read node usage", "error", herr.Error())
	}
	pods := s.opts.Pods()
	readings := map[string]Reading{}
	if s.stats != nil {
		for _, p := range pods {
			for _, c := range p.Containers {
				st, err := s.stats.ContainerStats(ctx, c.ID)
				if err != nil {
					if !errors.Is(err, cri.ErrNotFound) {
						s.opts.Logger.V(1).Info("Cannot read container usage", "pod", p.Namespace+"/"+p.Name, "container", c.Name, "error", err.Error())
					}
					continue
				}
				readings[c.ID] = Reading{Time: st.Timestamp, CPUNanos: st.CPUUsageNanos, WorkingSet: st.MemoryWorkingSetBytes, hasWorkingSet: true}
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if herr == nil {
		s.node.add(host)
		first = s.node.n == 1
	}
	next := make(map[string]*pair, len(readings))
	for id, r := range readings {
		p := s.containers[id]
		if p == nil {
			p, first = &pair{}, true
		}
		p.add(r)
		next[id] = p
	}
	s.containers, s.pods = next, pods
	return first
}

// Summary returns the figures of the last readings.
func (s *Sampler) Summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Summary{Node: NodeStats{NodeName: s.opts.NodeName}, Pods: []PodStats{}}
	if s.node.n > 0 {
		out.Node.CPU, out.Node.Memory = cpuMem(&s.node)
	}
	for _, p := range s.pods {
		ps := PodStats{PodRef: PodReference{Name: p.Name, Namespace: p.Namespace, UID: p.UID}, StartTime: api.NewTime(p.StartTime)}
		var (
			cpuSum, memSum, cumSum uint64
			rates                  = true
			window                 float64
			at                     time.Time
		)
		for _, c := range p.Containers {
			pr := s.containers[c.ID]
			if pr == nil {
				continue
			}
			cs := ContainerStats{Name: c.Name, StartTime: api.NewTime(c.StartTime)}
			cs.CPU, cs.Memory = cpuMem(pr)
			ps.Containers = append(ps.Containers, cs)
			if cs.CPU.UsageNanoCores == nil {
				rates = false
			} else {
				cpuSum += *cs.CPU.UsageNanoCores
				window = max(window, cs.CPU.WindowSeconds)
			}
			cumSum += pr.cur.CPUNanos
			memSum += pr.cur.WorkingSet
			if pr.cur.Time.After(at) {
				at = pr.cur.Time
			}
		}
		if len(ps.Containers) == 0 {
			continue
		}
		ps.CPU = &CPUStats{Time: api.NewTime(at), UsageCoreNanoSeconds: &cumSum}
		if rates {
			ps.CPU.UsageNanoCores, ps.CPU.WindowSeconds = &cpuSum, window
		}
		ps.Memory = &MemoryStats{Time: api.NewTime(at), WorkingSetBytes: &memSum}
		out.Pods = append(out.Pods, ps)
	}
	return out
}

func cpuMem(p *pair) (*CPUStats, *MemoryStats) {
	cum := p.cur.CPUNanos
	cpu := &CPUStats{Time: api.NewTime(p.cur.Time), UsageCoreNanoSeconds: &cum}
	cpu.UsageNanoCores, cpu.WindowSeconds = p.rate()
	mem := &MemoryStats{Time: api.NewTime(p.cur.Time)}
	if p.cur.hasWorkingSet {
		ws := p.cur.WorkingSet
		mem.WorkingSetBytes = &ws
	}
	return cpu, mem
}
