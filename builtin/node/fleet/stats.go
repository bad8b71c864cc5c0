package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/stats"
	"github.com/converge-dev/converge/framework/api"
)

// Usage is the steady usage a simulated container reports.
type Usage struct {
	// CPUMilli is its CPU use in millicores.
	CPUMilli int64
	// MemoryBytes is its memory working set.
	MemoryBytes uint64
}

// DefaultUsage reports a container using what it requests (1 millicore and
// 4 MiB without requests).
func DefaultUsage(_ *corev1.Pod, c *corev1.Container) Usage {
	u := Usage{CPUMilli: 1, MemoryBytes: 4 << 20}
	if q, ok := c.Resources.Requests["cpu"]; ok {
		if v, err := q.MilliValue(); err == nil {
			u.CPUMilli = v
		}
	}
	if q, ok := c.Resources.Requests["memory"]; ok {
		if v, err := q.Value(); err == nil && v > 0 {
			u.MemoryBytes = uint64(v)
		}
	}
	return u
}

// statsBase is the first of the loopback addresses that nodes serving stats
// take (127.112.0.1 for node 0, then one address per node), above the
// Service range (127.96.0.0/12).
var statsBase = netip.MustParseAddr("127.112.0.0")

// statsWindow is the window simulated CPU rates are reported over.
const statsWindow = 10 * time.Second

// nodeBaseMemory is the working set of a simulated node without pods.
const nodeBaseMemory = 512 << 20

// loopbackIP is node i's address when the fleet serves stats.
func loopbackIP(i int) netip.Addr {
	b := statsBase.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(i) + 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// serveStats listens on every address (so every node's loopback address
// reaches it) and serves /stats/summary and /metrics/resource for the node
// whose address the client dialled. It returns the port.
func (f *Fleet) serveStats(ctx context.Context) (int, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, fmt.Errorf("simulated: listen for stats: %w", err)
	}
	mux := http.NewServeMux()
	stats.Register(mux, func(r *http.Request) (stats.Summary, bool) {
		addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !ok {
			return stats.Summary{}, false
		}
		ap, err := netip.ParseAddrPort(addr.String())
		if err != nil {
			return stats.Summary{}, false
		}
		i := f.indexOfLoopback(ap.Addr().Unmap())
		if i < 0 {
			return stats.Summary{}, false
		}
		return f.summary(f.nodes[i].name, time.Now()), true
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.log.Error(err, "Stats server stopped")
		}
	}()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// indexOfLoopback is the node whose loopback address is a, or -1.
func (f *Fleet) indexOfLoopback(a netip.Addr) int {
	if !a.Is4() {
		return -1
	}
	b, base := a.As4(), statsBase.As4()
	v := int64(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	w := int64(uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3]))
	i := int(v - w - 1)
	if i < 0 || i >= len(f.nodes) {
		return -1
	}
	return i
}

// summary is the synthetic usage of a node: each running pod's containers at
// their Usage since they started, the node at their sum plus a base.
func (f *Fleet) summary(node string, now time.Time) stats.Summary {
	usage := f.opts.Usage
	if usage == nil {
		usage = DefaultUsage
	}
	at := api.NewTime(now)
	sum := stats.Summary{Node: stats.NodeStats{NodeName: node}, Pods: []stats.PodStats{}}
	var nodeCPU, nodeCum uint64
	nodeMem := uint64(nodeBaseMemory)
	for _, p := range f.pods.List() {
		if p.Spec.NodeName != node || p.Status.Phase != corev1.PodRunning || p.Status.StartTime == nil {
			continue
		}
		ran := max(now.Sub(p.Status.StartTime.Time), 0)
		ps := stats.PodStats{PodRef: stats.PodReference{Name: p.Name, Namespace: p.Namespace, UID: p.UID}, StartTime: *p.Status.StartTime}
		var podCPU, podCum, podMem uint64
		for i := range p.Spec.Containers {
			u := usage(p, &p.Spec.Containers[i])
			rate := uint64(u.CPUMilli) * 1e6
			cum := uint64(float64(rate) * ran.Seconds())
			ps.Containers = append(ps.Containers, stats.ContainerStats{Name: p.Spec.Containers[i].Name, StartTime: *p.Status.StartTime,
				CPU:    &stats.CPUStats{Time: at, UsageNanoCores: api.Ptr(rate), UsageCoreNanoSeconds: api.Ptr(cum), WindowSeconds: statsWindow.Seconds()},
				Memory: &stats.MemoryStats{Time: at, WorkingSetBytes: api.Ptr(u.MemoryBytes)}})
			podCPU, podCum, podMem = podCPU+rate, podCum+cum, podMem+u.MemoryBytes
		}
		ps.CPU = &stats.CPUStats{Time: at, UsageNanoCores: api.Ptr(podCPU), UsageCoreNanoSeconds: api.Ptr(podCum), WindowSeconds: statsWindow.Seconds()}
		ps.Memory = &stats.MemoryStats{Time: at, WorkingSetBytes: api.Ptr(podMem)}
		sum.Pods = append(sum.Pods, ps)
		nodeCPU, nodeCum, nodeMem = nodeCPU+podCPU, nodeCum+podCum, nodeMem+podMem
	}
	sum.Node.CPU = &stats.CPUStats{Time: at, UsageNanoCores: api.Ptr(nodeCPU), UsageCoreNanoSeconds: api.Ptr(nodeCum), WindowSeconds: statsWindow.Seconds()}
	sum.Node.Memory = &stats.MemoryStats{Time: at, WorkingSetBytes: api.Ptr(nodeMem)}
	return sum
}
