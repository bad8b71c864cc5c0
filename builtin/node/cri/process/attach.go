package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StdinAttacher = (*Runtime)(nil)

// stdinPipe is the write end of a container's stdin. A nil *stdinPipe is a
// container without one.
type stdinPipe struct {
	once bool // StdinOnce: closed when the first attach's input ends

	mu     sync.Mutex // serialises writes of concurrent attaches
	w      *os.File   // guarded by mu
	closed bool       // guarded by mu
}

func (p *stdinPipe) write(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errStdinClosed
	}
	_, err := p.w.Write(b)
	return err
}

func (p *stdinPipe) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.w.Close()
	}
}

var errStdinClosed = errors.New("the container's stdin is closed")

// AttachStdin implements cri.StdinAttacher. Containers adopted from an
// earlier agent have no stdin here (the pipe's write end went with it).
func (r *Runtime) AttachStdin(ctx context.Context, id string, in io.Reader) error {
	c, err := r.containers.Get(id)
	if err != nil {
		return err
	}
	p := c.stdin
	if p == nil {
		return fmt.Errorf("attach to container %s: it has no stdin open (stdin: true in the container spec, and not adopted from an earlier agent)", id)
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return fmt.Errorf("attach to container %s: its stdin was closed (stdinOnce, or it exited)", id)
	}
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if werr := p.write(buf[:n]); werr != nil {
					done <- werr
					return
				}
			}
			if err != nil {
				done <- nil
				return
			}
		}
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	if p.once {
		p.close()
	}
	if err != nil && !errors.Is(err, errStdinClosed) {
		return fmt.Errorf("attach to container %s: %w", id, err)
	}
	return nil
}
