package simulated

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/script"
)

// Options configure the runtime. The zero value means defaults.
type Options struct {
	// StartDelay is how long Start takes (default 0).
	StartDelay time.Duration
	// ImagePresent reports whether an image is available (default: all are);
	// a container without Args whose image is absent fails with ErrImageNotPresent.
	ImagePresent func(image string) bool
	// Usage is the synthetic resource usage a container reports (see
	// ContainerStats); nil means DefaultUsage for every container.
	Usage func(spec cri.ContainerSpec) Usage
}

// Runtime is the simulated runtime. Create it with New.
type Runtime struct {
	opts       Options
	containers cri.Table[*container]
}

var _ cri.Runtime = (*Runtime)(nil)

type container struct {
	spec   cri.ContainerSpec
	term   chan struct{}
	kill   context.CancelFunc
	done   chan struct{}
	logMu  sync.Mutex
	mu     sync.Mutex
	status cri.ContainerStatus // guarded by mu
}

// New returns a simulated runtime.
func New(opts Options) *Runtime {
	if opts.ImagePresent == nil {
		opts.ImagePresent = func(string) bool { return true }
	}
	return &Runtime{opts: opts}
}

// Name implements cri.Runtime.
func (r *Runtime) Name() string { return "simulated" }

// Start implements cri.Runtime.
func (r *Runtime) Start(ctx context.Context, spec cri.ContainerSpec) (string, error) {
	var errs []error
	if spec.Name == "" {
		errs = append(errs, errors.New("container name is empty"))
	}
	if spec.LogPath == "" {
		errs = append(errs, errors.New("log path is empty"))
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("%w: %w", cri.ErrInvalidSpec, errors.Join(errs...))
	}
	if len(spec.Args) == 0 && !r.opts.ImagePresent(spec.Image) {
		return "", fmt.Errorf("%w: %s", cri.ErrImageNotPresent, spec.Image)
	}
	if r.opts.StartDelay > 0 {
		select {
		case <-time.After(r.opts.StartDelay):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	var steps []script.Step
	idle := true
	if len(spec.Args) > 1 {
		if s, err := script.Parse(spec.Args[1:]); err == nil {
			steps, idle = s, false
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	runCtx, kill := context.WithCancel(context.Background())
	c := &container{spec: spec, term: make(chan struct{}, 1), kill: kill, done: make(chan struct{})}
	c.status = cri.ContainerStatus{ID: id, State: cri.StateRunning, StartedAt: time.Now()}
	r.containers.Add(id, c)
	go func() {
		var code int
		if idle {
			select {
			case <-c.term:
			case <-runCtx.Done():
				code = 137
			}
		} else {
			code = script.Run(runCtx, steps, &system{c: c, log: true}, c.term)
		}
		kill()
		reason := "Completed"
		if code != 0 {
			reason = "Error"
		}
		c.mu.Lock()
		c.status.State, c.status.ExitCode, c.status.Reason, c.status.FinishedAt = cri.StateExited, code, reason, time.Now()
		c.mu.Unlock()
		close(c.done)
	}()
	return id, nil
}

// Status implements cri.Runtime.
func (r *Runtime) Status(_ context.Context, id string) (cri.ContainerStatus, error) {
	return r.containers.Status(id)
}

// Wait implements cri.Runtime.
func (r *Runtime) Wait(ctx context.Context, id string) (cri.ContainerStatus, error) {
	return r.containers.Wait(ctx, id)
}

// Stop implements cri.Runtime.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	return r.containers.Stop(ctx, id, grace)
}

// Status implements cri.Tracked.
func (c *container) Status() cri.ContainerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Done implements cri.Tracked.
func (c *container) Done() <-chan struct{} { return c.done }

// Term implements cri.Tracked: a running script ends as on SIGTERM.
func (c *container) Term() {
	select {
	case c.term <- struct{}{}:
	default:
	}
}

// Kill implements cri.Tracked.
func (c *container) Kill() { c.kill() }

// Remove implements cri.Runtime.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	c, err := r.containers.Get(id)
	if err != nil {
		return nil
	}
	c.kill()
	<-c.done
	r.containers.Delete(id)
	return nil
}

// Exec implements cri.Runtime: a script runs against the container's env
// and mounts; any other command succeeds without output.
func (r *Runtime) Exec(ctx context.Context, id string, argv []string) (int, []byte, error) {
	c, err := r.containers.Get(id)
	if err != nil {
		return 0, nil, err
	}
	c.mu.Lock()
	state := c.status.State
	c.mu.Unlock()
	if state != cri.StateRunning {
		return 0, nil, fmt.Errorf("exec in container %s: it is %s", id, state)
	}
	if len(argv) < 2 {
		return 0, nil, nil
	}
	steps, err := script.Parse(argv[1:])
	if err != nil {
		return 0, nil, nil
	}
	sys := &system{c: c}
	code := script.Run(ctx, steps, sys, nil)
	return code, sys.out.Bytes(), nil
}

// system is a script.System over a simulated container.
type system struct {
	c   *container
	log bool // write output to the container's log (else to out)
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *system) line(stream, text string) {
	if !s.log {
		s.mu.Lock()
		s.out.WriteString(text + "\n")
		s.mu.Unlock()
		return
	}
	s.c.logMu.Lock()
	defer s.c.logMu.Unlock()
	f, err := os.OpenFile(s.c.spec.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "%s %s F %s\n", time.Now().UTC().Format(time.RFC3339Nano), stream, text)
}

func (s *system) Stdout(line string) { s.line("stdout", line) }
func (s *system) Stderr(line string) { s.line("stderr", line) }

func (s *system) Getenv(name string) (string, bool) {
	v, ok := "", false
	for _, kv := range s.c.spec.Env {
		if k, val, _ := strings.Cut(kv, "="); k == name {
			v, ok = val, true
		}
	}
	return v, ok
}

func (s *system) Getwd() string {
	if s.c.spec.WorkingDir == "" {
		return "/"
	}
	return s.c.spec.WorkingDir
}

// resolve maps a container path to a host path through the longest matching mount.
func (s *system) resolve(p string) (string, bool, error) {
	p = filepath.Clean(p)
	best := -1
	for i, m := range s.c.spec.Mounts {
		cp := filepath.Clean(m.ContainerPath)
		if (p == cp || strings.HasPrefix(p, cp+"/")) && (best < 0 || len(cp) > len(s.c.spec.Mounts[best].ContainerPath)) {
			best = i
		}
	}
	if best < 0 {
		return "", false, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	m := s.c.spec.Mounts[best]
	return filepath.Join(m.HostPath, strings.TrimPrefix(p, filepath.Clean(m.ContainerPath))), m.ReadOnly, nil
}

func (s *system) ReadFile(p string) ([]byte, error) {
	hp, _, err := s.resolve(p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(hp)
}

func (s *system) WriteFile(p string, data []byte) error {
	hp, ro, err := s.resolve(p)
	if err != nil {
		return err
	}
	if ro {
		return &fs.PathError{Op: "open", Path: p, Err: errors.New("read-only file system")}
	}
	return os.WriteFile(hp, data, 0o644)
}

func (s *system) Serve(string) error { return nil }
