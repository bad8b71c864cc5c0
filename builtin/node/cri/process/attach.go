package process

import (
	"context"
	"fmt"
	"io"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var (
	_ cri.StdinAttacher = (*Runtime)(nil)
	_ cri.TTYAttacher   = (*Runtime)(nil)
)

// AttachStdin implements cri.StdinAttacher. Containers adopted from an
// earlier agent have no stdin here (the pipe's write end went with it).
func (r *Runtime) AttachStdin(ctx context.Context, id string, in io.Reader) error {
	c, err := r.containers.Get(id)
	if err != nil {
		return err
	}
	if err := c.stdin.Attach(ctx, in); err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	return nil
}

// HasTTY implements cri.TTYAttacher.
func (r *Runtime) HasTTY(id string) bool {
	c, err := r.containers.Get(id)
	return err == nil && c.console != nil
}

// AttachTTY implements cri.TTYAttacher: the session gets the container's
// terminal (console.go).
func (r *Runtime) AttachTTY(ctx context.Context, id string, s cri.Streams) error {
	c, err := r.containers.Get(id)
	if err != nil {
		return err
	}
	if c.console == nil {
		return fmt.Errorf("attach to container %s: it has no terminal (tty: true in its spec)", id)
	}
	if err := c.console.Attach(ctx, s); err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	return nil
}
