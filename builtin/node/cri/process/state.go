package process

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// record is what the runtime persists about one container in StateDir, so a
// later runtime (after the agent restarted) can adopt it.
type record struct {
	ID   string            `json:"id"`
	Spec cri.ContainerSpec `json:"spec"`
	// PID is the container's main process on the host; ProcStart its start
	// time in clock ticks since boot (/proc/PID/stat field 22), which tells a
	// live container from an unrelated process that reused the PID.
	PID       int       `json:"pid"`
	ProcStart uint64    `json:"procStart"`
	StartedAt time.Time `json:"startedAt"`
	// PIDNamespace: the container is PID 1 of its own namespace.
	PIDNamespace bool     `json:"pidNamespace,omitempty"`
	CgroupDirs   []string `json:"cgroupDirs,omitempty"`
	CreatedPaths []string `json:"createdPaths,omitempty"`
	// Exited, with ExitCode, FinishedAt and Reason, once the exit was observed.
	Exited     bool      `json:"exited,omitempty"`
	ExitCode   int       `json:"exitCode,omitempty"`
	FinishedAt time.Time `json:"finishedAt,omitempty"`
	Reason     string    `json:"reason,omitempty"`
}

func (r *Runtime) recordPath(id string) string { return filepath.Join(r.stateDir, id+".json") }

// fifoPath is the named pipe a container's stream goes through when the
// runtime has a StateDir: the container holds it open read-write, so it never
// gets SIGPIPE when the agent dies, and a later runtime reopens it to go on
// copying its output.
func (r *Runtime) fifoPath(id, stream string) string {
	return filepath.Join(r.stateDir, id+"."+stream)
}

// save writes c's record atomically (best effort: an unsaved container is
// stopped with the agent like one without StateDir).
func (r *Runtime) save(c *container) {
	if r.stateDir == "" {
		return
	}
	c.mu.Lock()
	rec := record{ID: c.id, Spec: c.spec, PID: c.pid, ProcStart: c.procStart, StartedAt: c.status.StartedAt,
		PIDNamespace: c.pidNS, CgroupDirs: c.cgroupDirs, CreatedPaths: c.createdPaths}
	if c.status.State == cri.StateExited {
		rec.Exited, rec.ExitCode, rec.FinishedAt, rec.Reason = true, c.status.ExitCode, c.status.FinishedAt, c.status.Reason
	}
	c.mu.Unlock()
	b, err := json.Marshal(rec)
	if err == nil {
		tmp := r.recordPath(c.id) + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, r.recordPath(c.id))
		}
	}
	if err != nil {
		r.log.Error(err, "Persist container state failed", "container", c.id)
	}
}

// forget removes c's record and pipes.
func (r *Runtime) forget(id string) {
	if r.stateDir == "" {
		return
	}
	for _, p := range []string{r.recordPath(id), r.fifoPath(id, "stdout"), r.fifoPath(id, "stderr")} {
		_ = os.Remove(p)
	}
}

// procStat returns a process's state letter and start time (clock ticks since
// boot) from /proc/PID/stat.
func procStat(pid int) (state byte, start uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	state, start, err = parseStat(string(b))
	if err != nil {
		return 0, 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return state, start, nil
}

// parseStat reads the state (field 3) and start time (field 22) of a
// /proc/PID/stat line.
func parseStat(line string) (state byte, start uint64, err error) {
	// The command name (field 2) may hold spaces and parentheses: fields 3..
	// follow the last ')'.
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no command name in %q", line)
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("%d fields after the command name, want at least 20", len(f))
	}
	if start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("start time: %w", err)
	}
	return f[0][0], start, nil
}

// alive reports whether pid is still the process that started at start (not
// a zombie, not a reused PID).
func alive(pid int, start uint64) bool {
	st, s, err := procStat(pid)
	return err == nil && s == start && st != 'Z' && st != 'X'
}

// openFIFOs creates the container's stream pipes and returns the child's ends
// (read-write, blocking) and the runtime's read ends.
func (r *Runtime) openFIFOs(id string) (childOut, childErr *os.File, readOut, readErr *os.File, err error) {
	var opened []*os.File
	defer func() {
		if err != nil {
			for _, f := range opened {
				f.Close()
			}
			r.forget(id)
		}
	}()
	files := make([]*os.File, 0, 4)
	for _, stream := range []string{"stdout", "stderr"} {
		p := r.fifoPath(id, stream)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("create %s pipe: %w", stream, err)
		}
		// The child's end first (O_RDWR never blocks), so the reader sees a
		// writer until the container and its descendants exit.
		fd, err := syscall.Open(p, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("open %s pipe: %w", stream, err)
		}
		w := os.NewFile(uintptr(fd), p)
		opened = append(opened, w)
		rd, err := openReader(p)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		opened = append(opened, rd)
		files = append(files, w, rd)
	}
	return files[0], files[2], files[1], files[3], nil
}

// openReader opens a FIFO's read end without blocking for a writer (reads
// go through the poller and end with EOF once every writer closed).
func openReader(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open pipe %s: %w", p, err)
	}
	return f, nil
}

// load reads StateDir and adopts the containers an earlier runtime started:
// live ones are watched (their output copied on from their pipes), dead ones
// become exited containers — with the recorded status when their exit was
// observed, else ReasonStatusUnknown.
func (r *Runtime) load() error {
	if err := os.MkdirAll(r.stateDir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	ents, err := os.ReadDir(r.stateDir)
	if err != nil {
		return fmt.Errorf("read state dir: %w", err)
	}
	records := map[string]bool{}
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			records[id] = true
		}
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			_ = os.Remove(filepath.Join(r.stateDir, name))
			continue
		}
		if id, ok := strings.CutSuffix(name, ".stdout"); ok && !records[id] {
			_ = os.Remove(filepath.Join(r.stateDir, name)) // its container never started
			continue
		}
		if id, ok := strings.CutSuffix(name, ".stderr"); ok && !records[id] {
			_ = os.Remove(filepath.Join(r.stateDir, name))
			continue
		}
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.stateDir, name))
		if err != nil {
			return fmt.Errorf("read container state: %w", err)
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil || rec.ID+".json" != name {
			r.log.Info("Ignoring unreadable container state", "file", name)
			continue
		}
		r.adopt(rec)
	}
	return nil
}

func (r *Runtime) adopt(rec record) {
	c := &container{id: rec.ID, spec: rec.Spec, done: make(chan struct{}), pid: rec.PID, procStart: rec.ProcStart,
		pidNS: rec.PIDNamespace, cgroupDirs: rec.CgroupDirs, createdPaths: rec.CreatedPaths, adopted: true}
	c.status = cri.ContainerStatus{ID: rec.ID, State: cri.StateRunning, StartedAt: rec.StartedAt, PID: rec.PID}
	r.mounts.acquire(targets(rec.Spec.Mounts))
	r.containers.Add(c.id, c)
	if rec.Exited || !alive(rec.PID, rec.ProcStart) {
		if rec.Exited {
			c.status.ExitCode, c.status.FinishedAt, c.status.Reason = rec.ExitCode, rec.FinishedAt, rec.Reason
		} else {
			c.status.ExitCode, c.status.FinishedAt, c.status.Reason = 137, time.Now(), cri.ReasonStatusUnknown
			// Descendants may still hold the group: end them.
			_ = syscall.Kill(-rec.PID, syscall.SIGKILL)
		}
		c.status.State, c.status.PID = cri.StateExited, 0
		close(c.done)
		if !rec.Exited {
			r.save(c)
		}
		r.log.V(1).Info("Found exited container", "container", c.id, "exitCode", c.status.ExitCode, "reason", c.status.Reason)
		return
	}
	r.log.Info("Adopted running container", "container", c.id, "pod", rec.Spec.PodNamespace+"/"+rec.Spec.PodName, "name", rec.Spec.Name, "pid", rec.PID)
	var copiers sync.WaitGroup
	if logf, err := os.OpenFile(rec.Spec.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640); err != nil {
		r.log.Error(err, "Open log of adopted container failed", "container", c.id)
	} else {
		lw := &logWriter{f: logf}
		var readers []io.ReadCloser
		for _, stream := range []string{"stdout", "stderr"} {
			rd, err := openReader(r.fifoPath(c.id, stream))
			if err != nil {
				r.log.Error(err, "Reopen output of adopted container failed", "container", c.id)
				continue
			}
			readers = append(readers, rd)
			copiers.Add(1)
			go func() { defer copiers.Done(); lw.copy(rd, stream) }()
		}
		go func() {
			copiers.Wait()
			logf.Close()
		}()
		c.closeReaders = func() {
			for _, rd := range readers {
				rd.Close()
			}
		}
	}
	go r.watchAdopted(c, &copiers)
}

// watchAdopted polls an adopted (non-child) container until it is gone. Its
// exit status cannot be read (it is not our child): it is 137 after our
// SIGKILL, 143 after our SIGTERM, else 137 with ReasonStatusUnknown.
func (r *Runtime) watchAdopted(c *container, copiers *sync.WaitGroup) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		if !alive(c.pid, c.procStart) {
			break
		}
	}
	finished := time.Now()
	_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	flushed := make(chan struct{})
	go func() { copiers.Wait(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(2 * time.Second):
		if c.closeReaders != nil {
			c.closeReaders()
		}
		<-flushed
	}
	code, reason := 137, cri.ReasonStatusUnknown
	c.mu.Lock()
	switch c.sent {
	case syscall.SIGKILL:
		code, reason = 137, "Error"
	case syscall.SIGTERM:
		code, reason = 143, "Error"
	}
	c.mu.Unlock()
	if r.cgroups.oomKilled(c.cgroupDirs) {
		reason = "OOMKilled"
	}
	c.mu.Lock()
	c.status.State, c.status.ExitCode, c.status.FinishedAt, c.status.Reason, c.status.PID = cri.StateExited, code, finished, reason, 0
	c.mu.Unlock()
	r.releaseMounts(c)
	r.save(c)
	close(c.done)
}

// List implements cri.Lister: every container this runtime started or
// adopted, oldest first.
func (r *Runtime) List(context.Context) ([]cri.ContainerInfo, error) {
	cs := r.containers.All()
	out := make([]cri.ContainerInfo, 0, len(cs))
	for _, c := range cs {
		c.mu.Lock()
		out = append(out, cri.ContainerInfo{Spec: c.spec, Status: c.status})
		c.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Status.StartedAt.Equal(out[j].Status.StartedAt) {
			return out[i].Status.StartedAt.Before(out[j].Status.StartedAt)
		}
		return out[i].Status.ID < out[j].Status.ID
	})
	return out, nil
}
