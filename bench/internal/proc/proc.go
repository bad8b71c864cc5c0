package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/converge-dev/converge/internal/e2etool"
)

// Start starts name with args and env added to the environment, logging to
// dir/<base name>.log, and stops it (SIGTERM, SIGKILL after 10 s) when tb
// ends; it dies with the test process too.
func Start(tb testing.TB, dir string, env []string, name string, args ...string) *exec.Cmd {
	tb.Helper()
	log, err := os.Create(filepath.Join(dir, filepath.Base(name)+".log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = log.Close()
	})
	return cmd
}

// CPU is the user and system CPU time process pid used so far.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	// Fields after the command name in parentheses: state is the first,
	// utime the 12th and stime the 13th, in clock ticks (USER_HZ = 100).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// Runtime is the time the threads of process pid have run on a CPU so far,
// to the nanosecond (the sum of /proc/<pid>/task/*/schedstat; CPU counts in
// clock ticks): for the short slices of a benchmark. Threads that exited are
// not counted (a Go process keeps its threads).
func Runtime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("list threads of pid %d: %w", pid, err)
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += ns
	}
	return time.Duration(sum), nil
}

// FreePort is a TCP port on 127.0.0.1, free a moment ago and below the
// kernel's ephemeral range (e2etool.FreePort), so that no outgoing
// connection takes it before the server it is handed to binds it.
func FreePort(tb testing.TB) int {
	tb.Helper()
	port, err := e2etool.FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	return port
}
