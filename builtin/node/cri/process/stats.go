package process

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StatsProvider = (*Runtime)(nil)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// ContainerStats implements cri.StatsProvider. Containers of this runtime
// are not each in a cgroup of their own (cgroups are made only for limits, and
// only on cgroup v1 hierarchies), so the figures are sums over the
// container's process tree read from /proc: CPU is utime+stime of every live
// process plus cutime+cstime (the children they reaped), memory is their
// resident set. A process that left the tree without being reaped by it
// takes its CPU time with it, so the counter can step back; rates computed
// from it are clamped at zero by the agent.
func (r *Runtime) ContainerStats(_ context.Context, id string) (cri.ContainerStats, error) {
	c, err := r.containers.Get(id)
	if err != nil {
		return cri.ContainerStats{}, err
	}
	c.mu.Lock()
	pid, start, state := c.pid, c.procStart, c.status.State
	c.mu.Unlock()
	if state != cri.StateRunning || pid == 0 || !alive(pid, start) {
		return cri.ContainerStats{}, fmt.Errorf("container %s is not running: %w", id, cri.ErrNotFound)
	}
	procs, err := readProcs()
	if err != nil {
		return cri.ContainerStats{}, err
	}
	return treeStats(procs, pid, time.Now()), nil
}

// proc is what one /proc/<pid>/stat line says about resource usage.
type proc struct {
	ppid                         int
	utime, stime, cutime, cstime uint64 // clock ticks
	rssPages                     uint64
}

// readProcs reads every process's stat line.
func readProcs() (map[int]proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	out := make(map[int]proc, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if p, err := parseProc(string(b)); err == nil {
			out[pid] = p
		}
	}
	return out, nil
}

// parseProc reads the fields of a /proc/<pid>/stat line that count resource
// usage (proc(5): ppid is field 4, utime..cstime 14..17, rss 24).
func parseProc(line string) (proc, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("stat line without a command name")
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 22 {
		return proc{}, fmt.Errorf("stat line has %d fields after the name, want at least 22", len(f))
	}
	num := func(k int) uint64 { v, _ := strconv.ParseUint(f[k-3], 10, 64); return v }
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, fmt.Errorf("stat line: ppid %q: %w", f[1], err)
	}
	return proc{ppid: ppid, utime: num(14), stime: num(15), cutime: num(16), cstime: num(17), rssPages: num(24)}, nil
}

// treeStats sums the usage of root and its descendants.
func treeStats(procs map[int]proc, root int, now time.Time) cri.ContainerStats {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	var ticks, pages uint64
	seen := map[int]bool{}
	todo := []int{root}
	for len(todo) > 0 {
		pid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		p, ok := procs[pid]
		if !ok || seen[pid] {
			continue
		}
		seen[pid] = true
		ticks += p.utime + p.stime + p.cutime + p.cstime
		pages += p.rssPages
		todo = append(todo, children[pid]...)
	}
	return cri.ContainerStats{
		Timestamp:             now,
		CPUUsageNanos:         ticks * uint64(time.Second/clockTicks),
		MemoryWorkingSetBytes: pages * uint64(os.Getpagesize()),
	}
}
