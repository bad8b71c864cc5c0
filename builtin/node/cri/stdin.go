package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Stdin is the write end of a container's stdin kept open for attach
// sessions (StdinAttacher), shared by the runtimes that implement it. A nil
// *Stdin is a container without one. Safe for concurrent use.
type Stdin struct {
	once    bool   // StdinOnce: closed when the first attach's input ends
	onClose func() // called once after w is closed (nil: none)

	mu     sync.Mutex     // serialises writes of concurrent attaches
	w      io.WriteCloser // guarded by mu
	closed bool           // guarded by mu
}

// NewStdin wraps w, the writer of a container's stdin. With once, the first
// Attach closes it when its input ends; onClose (optional) runs after w is
// closed.
func NewStdin(w io.WriteCloser, once bool, onClose func()) *Stdin {
	return &Stdin{w: w, once: once, onClose: onClose}
}

// ErrStdinClosed: the container's stdin was closed (StdinOnce, or it exited).
var ErrStdinClosed = errors.New("runtime: the container's stdin is closed")

// Attach copies in to the container's stdin until in ends, a write fails or
// ctx ends. It fails with ErrStdinClosed when the stdin is closed already.
func (s *Stdin) Attach(ctx context.Context, in io.Reader) error {
	if s == nil {
		return errors.New("runtime: the container has no stdin open (stdin: true in its spec)")
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrStdinClosed
	}
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if werr := s.write(buf[:n]); werr != nil {
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
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	if s.once {
		s.Close()
	}
	if err != nil && !errors.Is(err, ErrStdinClosed) {
		return fmt.Errorf("write stdin: %w", err)
	}
	return nil
}

func (s *Stdin) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStdinClosed
	}
	_, err := s.w.Write(b)
	return err
}

// Close closes the container's stdin (idempotent; nil-safe). A write blocked
// on a full pipe ends when the container exits and its reader goes away.
func (s *Stdin) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	_ = s.w.Close()
	s.mu.Unlock()
	if s.onClose != nil {
		s.onClose()
	}
}
