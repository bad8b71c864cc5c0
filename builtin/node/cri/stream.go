package cri

import (
	"context"
	"io"
	"time"
)

// TermSize is a terminal size in character cells (kubectl's resize messages).
type TermSize struct {
	Width, Height uint16
}

// Streams are the standard streams of an interactive command (kubectl exec).
// A nil Stdin means no input (the command reads end of file); a nil Stdout or
// Stderr discards that output. With TTY the command runs on a terminal whose
// output (stdout and stderr together) goes to Stdout; Resize then carries the
// terminal sizes the client reports, the first one as soon as it knows it.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	Resize         <-chan TermSize
}

// StreamExecer is implemented by runtimes that run interactive commands in a
// running container (pods/exec). ExecStream returns when the command exited
// and its output was written, with the command's exit code; an error means
// the command could not run (ErrNotFound for an unknown container). When ctx
// ends first the command is killed.
type StreamExecer interface {
	ExecStream(ctx context.Context, id string, cmd []string, s Streams) (int, error)
}

// StdinAttacher is implemented by runtimes that keep the stdin of containers
// started with ContainerSpec.Stdin open (kubectl attach -i). AttachStdin
// copies r into the container's stdin until r ends or ctx ends; the
// container's stdin then stays open, unless the spec says StdinOnce. It fails
// when the container has no open stdin.
type StdinAttacher interface {
	AttachStdin(ctx context.Context, id string, r io.Reader) error
}

// TTYAttacher is implemented by runtimes that run containers started with
// ContainerSpec.TTY on a terminal they hold (kubectl attach -it). HasTTY
// reports whether container id has one. AttachTTY joins a session to it:
// what the terminal shows from now on goes to s.Stdout, s.Stdin (when set;
// the container must set Stdin) is typed into it and s.Resize resizes it.
// It returns when the container exits, ctx ends or s.Stdin ends (the
// client detached: the container keeps running, unless its spec says
// StdinOnce, whose first session's end closes the input).
type TTYAttacher interface {
	HasTTY(id string) bool
	AttachTTY(ctx context.Context, id string, s Streams) error
}

// InitialSizeWait bounds how long a TTY command waits for the client's first
// terminal size before it starts (InitialSize). Clients send it as soon as
// the stream is up, but it crosses the API server's proxy first: on a loaded
// machine 500 ms was seen to be too short (`stty size` answered 0 0).
const InitialSizeWait = 2 * time.Second

// InitialSize waits up to wait for the first size on resize, which clients
// send as soon as the session is up, so that a command on a terminal starts
// with the client's size rather than racing it (a program that reads its
// size once, such as `stty size`, would see 0 0). It reports false when
// resize is nil, closed, ctx ended or no size came in time.
func InitialSize(ctx context.Context, resize <-chan TermSize, wait time.Duration) (TermSize, bool) {
	if resize == nil {
		return TermSize{}, false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case size, ok := <-resize:
		return size, ok && size.Width > 0 && size.Height > 0
	case <-t.C:
	case <-ctx.Done():
	}
	return TermSize{}, false
}
