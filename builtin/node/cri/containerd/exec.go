package containerd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
)

// maxExecOutput caps the output Exec keeps (the kubelet keeps 10 KiB of a probe's).
const maxExecOutput = 1 << 20

// Exec runs cmd in the running container with the container's environment,
// user and working directory, and returns its exit code and combined output
// (at most 1 MiB). When ctx ends first the command is killed.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	ctx = r.nsCtx(ctx)
	if len(cmd) == 0 {
		return -1, nil, fmt.Errorf("exec in container %s: empty command", id)
	}
	task, exited, err := r.taskAndExit(ctx, id)
	if err != nil {
		return -1, nil, err
	}
	if task == nil {
		return -1, nil, fmt.Errorf("exec in container %s: %w", id, errNoTask)
	}
	select {
	case <-exited:
		return -1, nil, fmt.Errorf("exec in container %s: %w", id, errNotRunning)
	default:
	}
	spec, err := task.Spec(ctx)
	if err != nil {
		return -1, nil, fmt.Errorf("exec in container %s: read spec: %w", id, err)
	}
	pspec := *spec.Process
	pspec.Args = cmd
	pspec.Terminal = false

	out := &cappedBuffer{max: maxExecOutput}
	proc, err := task.Exec(ctx, "exec-"+newID()[:16], &pspec, cio.NewCreator(cio.WithStreams(nil, out, out)))
	if err != nil {
		return -1, nil, fmt.Errorf("exec in container %s: %w", id, err)
	}
	dctx := context.WithoutCancel(ctx)
	defer func() { _, _ = proc.Delete(dctx, client.WithProcessKill) }()
	exitCh, err := proc.Wait(dctx)
	if err != nil {
		return -1, nil, fmt.Errorf("exec in container %s: wait: %w", id, err)
	}
	if err := proc.Start(ctx); err != nil {
		return -1, nil, fmt.Errorf("exec in container %s: start %q: %w", id, cmd[0], err)
	}
	var es client.ExitStatus
	select {
	case es = <-exitCh:
	case <-ctx.Done():
		_ = proc.Kill(dctx, syscall.SIGKILL)
		<-exitCh
		return -1, out.bytes(), fmt.Errorf("exec in container %s: %w", id, ctx.Err())
	}
	proc.IO().Wait()
	code, _, err := es.Result()
	if err != nil {
		return -1, out.bytes(), fmt.Errorf("exec in container %s: %w", id, err)
	}
	return int(code), out.bytes(), nil
}

var (
	errNotRunning = errors.New("container is not running")
	errNoTask     = errors.New("container has no task")
)

// cappedBuffer collects the combined output of two streams (hence the mutex:
// cio copies each stream from its own goroutine) up to max bytes.
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *cappedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}
