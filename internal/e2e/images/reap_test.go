package images

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
)

// reapLeftovers removes what a failed run can leave behind under dir once
// converge up has exited: containerd shims of containers that were stopped but
// not removed (the node keeps them for its restart) with their containers'
// processes, and pod network namespaces still mounted under dir. A passing run
// leaves none; a CI machine must not collect them from failing ones.
func reapLeftovers(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	parent := map[int]int{}
	var shims []int
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(p, "stat")); err == nil {
			// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
			if i := bytes.LastIndexByte(stat, ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
					parent[pid], _ = strconv.Atoi(f[1])
				}
			}
		}
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte("containerd-shim")) && bytes.Contains(cmd, []byte(dir)) {
			shims = append(shims, pid)
		}
	}
	for _, shim := range shims {
		for pid, ppid := range parent {
			if ppid == shim {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = syscall.Kill(shim, syscall.SIGKILL)
		GinkgoWriter.Printf("reaped leftover containerd shim %d under %s\n", shim, dir)
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				_ = syscall.Unmount(f[4], syscall.MNT_DETACH)
			}
		}
	}
}
