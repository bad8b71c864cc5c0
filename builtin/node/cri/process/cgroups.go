package process

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/node/cri"
)

const cgroupRoot = "/sys/fs/cgroup"

// cgroups applies cgroup v1 limits, best effort.
type cgroups struct {
	log    logr.Logger
	parent map[string]string // controller → absolute parent dir
}

func newCgroups(parent string, log logr.Logger) *cgroups {
	cg := &cgroups{log: log, parent: map[string]string{}}
	own := ownCgroups()
	for _, ctrl := range []string{"memory", "cpu"} {
		base := filepath.Join(cgroupRoot, ctrl)
		if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
			continue // not a v1 hierarchy
		}
		p := parent
		if p == "" {
			p = filepath.Join(own[ctrl], "converge")
		}
		cg.parent[ctrl] = filepath.Join(base, p)
	}
	return cg
}

// ownCgroups reads this process's v1 cgroup paths by controller.
func ownCgroups() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// create makes the container's cgroups for the limits that are set.
func (cg *cgroups) create(id string, res cri.Resources) []string {
	var dirs []string
	write := func(dir, file, value string) bool {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
			cg.log.V(1).Info("Cannot set cgroup limit", "file", filepath.Join(dir, file), "error", err.Error())
			return false
		}
		return true
	}
	if p, ok := cg.parent["memory"]; ok && res.MemoryBytes > 0 {
		dir := filepath.Join(p, id)
		if err := os.MkdirAll(dir, 0o755); err == nil {
			dirs = append(dirs, dir)
			write(dir, "memory.limit_in_bytes", strconv.FormatInt(res.MemoryBytes, 10))
		} else {
			cg.log.V(1).Info("Cannot create memory cgroup", "dir", dir, "error", err.Error())
		}
	}
	if p, ok := cg.parent["cpu"]; ok && res.CPUMilli > 0 {
		dir := filepath.Join(p, id)
		if err := os.MkdirAll(dir, 0o755); err == nil {
			dirs = append(dirs, dir)
			write(dir, "cpu.cfs_period_us", "100000")
			write(dir, "cpu.cfs_quota_us", strconv.FormatInt(res.CPUMilli*100, 10))
		} else {
			cg.log.V(1).Info("Cannot create cpu cgroup", "dir", dir, "error", err.Error())
		}
	}
	return dirs
}

func (cg *cgroups) attach(dirs []string, pid int) {
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			cg.log.V(1).Info("Cannot move process into cgroup", "dir", d, "error", err.Error())
		}
	}
}

// oomKilled reports whether the kernel OOM-killed a process in the memory cgroup.
func (cg *cgroups) oomKilled(dirs []string) bool {
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "memory.oom_control"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok && strings.TrimSpace(v) != "0" {
				return true
			}
		}
	}
	return false
}

func (cg *cgroups) remove(dirs []string) {
	for _, d := range dirs {
		_ = os.Remove(d)
	}
}
