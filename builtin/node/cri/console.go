package cri

import (
	"context"
	"errors"
	"sync"
)

// Console is the runtime's side of a container that runs on a terminal
// (ContainerSpec.TTY), shared by the runtimes that implement TTYAttacher:
// the runtime writes what the terminal shows to it (Write), and it passes
// that to the attach sessions, their input to the container's Stdin and
// their terminal sizes to resize. Safe for concurrent use.
type Console struct {
	in     *Stdin         // the terminal's input (nil: the container has no stdin)
	resize func(TermSize) // resizes the terminal

	mu   sync.Mutex     // never held while writing input
	subs map[int]writer // attached outputs; guarded by mu
	next int            // guarded by mu

	exited    chan struct{} // closed by Close
	closeOnce sync.Once
}

type writer interface {
	Write(p []byte) (int, error)
}

// NewConsole returns the console of a container whose terminal input is in
// (nil when its spec has no stdin) and which resize resizes.
func NewConsole(in *Stdin, resize func(TermSize)) *Console {
	return &Console{in: in, resize: resize, subs: map[int]writer{}, exited: make(chan struct{})}
}

// Write passes what the terminal shows to the attached sessions; a session
// whose write fails is dropped. It never fails.
func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, w := range c.subs {
		if _, err := w.Write(p); err != nil {
			delete(c.subs, k)
		}
	}
	return len(p), nil
}

// Close ends the sessions: the container exited. Its Stdin is closed by the
// runtime. Idempotent; nil-safe.
func (c *Console) Close() {
	if c == nil {
		return
	}
	c.closeOnce.Do(func() { close(c.exited) })
}

// Attach runs one attach session until the container exits, ctx ends or the
// session's input ends (the client detached: the container keeps running,
// unless its Stdin is StdinOnce, which Stdin.Attach then closes). s.Stdout
// gets what the terminal shows from now on, s.Stdin is typed into it and
// s.Resize resizes it.
func (c *Console) Attach(ctx context.Context, s Streams) error {
	if s.Stdin != nil && c.in == nil {
		return errors.New("the container does not set stdin: true")
	}
	c.mu.Lock()
	id := c.next
	c.next++
	if s.Stdout != nil {
		c.subs[id] = s.Stdout
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The client sends its terminal's size at once, on its own stream: apply
	// it before the session's first keystrokes reach the program, which may
	// read the size as soon as it has read a line.
	if size, ok := InitialSize(ctx, s.Resize, InitialSizeWait); ok {
		c.resize(size)
	}
	go func() {
		for {
			select {
			case size, ok := <-s.Resize:
				if !ok {
					return
				}
				if size.Width > 0 && size.Height > 0 {
					c.resize(size)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	inDone := make(chan error, 1)
	if s.Stdin != nil {
		go func() { inDone <- c.in.Attach(ctx, s.Stdin) }()
	}
	select {
	case <-c.exited:
	case <-ctx.Done():
	case err := <-inDone:
		return err
	}
	return nil
}
