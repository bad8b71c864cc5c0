package containerd

import (
	"context"
	"fmt"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.TTYAttacher = (*Runtime)(nil)

// Containers started with TTY run on a terminal the shim allocates
// (oci.WithTTY, cio.WithTerminal): its one output is logged as stdout and
// passed to attach sessions through a cri.Console, which types their input
// into the task's stdin and resizes the terminal with task.Resize.

// newConsole returns the console of a TTY container whose task (created
// after the console) task returns and whose input is in (nil: no stdin).
func newConsole(ctx context.Context, task func() client.Task, in *cri.Stdin) *cri.Console {
	dctx := context.WithoutCancel(ctx)
	return cri.NewConsole(in, func(size cri.TermSize) {
		if t := task(); t != nil {
			_ = t.Resize(dctx, uint32(size.Width), uint32(size.Height))
		}
	})
}

// withTerminal is cio.WithTerminal when tty is set.
func withTerminal(tty bool) cio.Opt {
	if tty {
		return cio.WithTerminal
	}
	return func(*cio.Streams) {}
}

// HasTTY implements cri.TTYAttacher for containers this Runtime started.
func (r *Runtime) HasTTY(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.running[id]
	return c != nil && c.console != nil
}

// AttachTTY implements cri.TTYAttacher.
func (r *Runtime) AttachTTY(ctx context.Context, id string, s cri.Streams) error {
	r.mu.Lock()
	c := r.running[id]
	r.mu.Unlock()
	if c == nil || c.console == nil {
		return fmt.Errorf("attach to container %s: not running on a terminal started by this agent: %w", id, cri.ErrNotFound)
	}
	if err := c.console.Attach(ctx, s); err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	return nil
}

// targetPIDNamespace is the PID namespace of the running container id
// (started by this Runtime), for an ephemeral container that targets it.
func (r *Runtime) targetPIDNamespace(id string) (string, error) {
	r.mu.Lock()
	c := r.running[id]
	r.mu.Unlock()
	if c == nil || c.pid == 0 {
		return "", fmt.Errorf("%w: target container %s is not running here", cri.ErrInvalidSpec, id)
	}
	return fmt.Sprintf("/proc/%d/ns/pid", c.pid), nil
}
