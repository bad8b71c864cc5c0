package containerd

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// ioFlushTimeout bounds how long the exit handler waits for the output FIFOs to
// drain after the process exited (a leaked descriptor in a grandchild could
// otherwise hold them open forever).
const ioFlushTimeout = 2 * time.Second

// container is a container started by this Runtime.
type container struct {
	id         string
	task       client.Task
	pid        int
	startedAt  time.Time
	cgroupPath string
	stdin      *cri.Stdin   // kept open for attach when the spec asks (nil: none)
	console    *cri.Console // the terminal of a TTY container (nil: none; tty.go)

	// done is closed once the exit is recorded and the log flushed; the fields
	// below are written before that and only read after.
	done       chan struct{}
	exitCode   int
	finishedAt time.Time
	oomKilled  bool
	waitErr    error
}

// watch records the exit, drains and closes the log.
func (c *container) watch(ctx context.Context, exitCh <-chan client.ExitStatus, logs *logFile, streams ...*logStream) {
	defer close(c.done)
	es := <-exitCh
	c.stdin.Close()
	c.console.Close()
	code, at, err := es.Result()
	c.exitCode, c.finishedAt, c.waitErr = int(code), at, err
	if at.IsZero() {
		c.finishedAt = time.Now()
	}
	if c.finishedAt.Before(c.startedAt) { // clocks of the shim and of this process
		c.finishedAt = c.startedAt
	}
	// The memory cgroup survives until the task is deleted.
	c.oomKilled = oomKilled(c.cgroupPath)

	flushed := make(chan struct{})
	go func() { c.task.IO().Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(ioFlushTimeout):
		logr.FromContextOrDiscard(ctx).Info("Container output still open after exit; closing it", "container", c.id)
		c.task.IO().Close()
		<-flushed
	}
	for _, s := range streams {
		s.flush()
	}
	logs.close()
	// Removes the FIFOs now: the task may be deleted by another Runtime (after
	// an agent restart) or never; Delete closing them again is harmless.
	_ = c.task.IO().Close()
}

func (c *container) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// oomKilled reads the memory cgroup's OOM-kill counter (cgroup v1 or v2).
func oomKilled(cgroupPath string) bool {
	if cgroupPath == "" || strings.Contains(cgroupPath, ":") { // systemd-style paths are not ours
		return false
	}
	for _, file := range []string{
		filepath.Join("/sys/fs/cgroup/memory", cgroupPath, "memory.oom_control"), // v1
		filepath.Join("/sys/fs/cgroup", cgroupPath, "memory.events"),             // v2
	} {
		if n, ok := readCounter(file, "oom_kill"); ok {
			return n > 0
		}
	}
	return false
}

func readCounter(file, key string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
