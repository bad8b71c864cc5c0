package containerd

import (
	"context"
	"fmt"
	"io"

	"github.com/containerd/containerd/v2/client"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StdinAttacher = (*Runtime)(nil)

// AttachStdin implements cri.StdinAttacher for containers this Runtime
// started with Stdin (a Runtime after an agent restart has no stdin to give).
func (r *Runtime) AttachStdin(ctx context.Context, id string, in io.Reader) error {
	r.mu.Lock()
	c := r.running[id]
	r.mu.Unlock()
	if c == nil {
		return fmt.Errorf("attach to container %s: not running or not started by this agent: %w", id, cri.ErrNotFound)
	}
	if err := c.stdin.Attach(ctx, in); err != nil {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	return nil
}

// newStdin keeps w, the pipe cio copies into the task's stdin, for attach
// sessions; closing it also tells the shim to close the process's stdin.
// task returns the container's task, created after the Stdin.
func newStdin(ctx context.Context, task func() client.Task, w *io.PipeWriter, once bool) *cri.Stdin {
	if w == nil {
		return nil
	}
	dctx := context.WithoutCancel(ctx)
	return cri.NewStdin(w, once, func() {
		if t := task(); t != nil {
			_ = t.CloseIO(dctx, client.WithStdinCloser)
		}
	})
}

// readerOrNil keeps a nil *io.PipeReader a nil io.Reader (cio then opens no
// stdin FIFO).
func readerOrNil(r *io.PipeReader) io.Reader {
	if r == nil {
		return nil
	}
	return r
}

func closePipe(w *io.PipeWriter) {
	if w != nil {
		_ = w.Close()
	}
}
