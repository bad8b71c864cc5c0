package process

import (
	"context"
	"fmt"
	"io"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StdinAttacher = (*Runtime)(nil)

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
