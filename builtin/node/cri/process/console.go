package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// console is the pseudo-terminal of a container started with TTY: the
// container's stdin, stdout and stderr are the terminal; the runtime holds
// its master side, logs what it reads from it as stdout and passes it to
// the attach sessions (kubectl attach -it), whose input and terminal sizes
// go to the terminal. Safe for concurrent use.
type console struct {
	ptmx  *os.File
	stdin bool // the spec asks for stdin: attach sessions may write
	once  bool // StdinOnce: input closes when the first session's input ends

	outMu sync.Mutex        // never held while writing input
	subs  map[int]io.Writer // attached outputs; guarded by outMu
	next  int               // guarded by outMu

	inMu     sync.Mutex // serialises input writes
	inClosed bool       // no more input (StdinOnce, or the container exited); guarded by inMu

	exited    chan struct{} // closed when the container exited
	closeOnce sync.Once
}

func newConsole(ptmx *os.File, stdin, once bool) *console {
	return &console{ptmx: ptmx, stdin: stdin, once: once, subs: map[int]io.Writer{}, exited: make(chan struct{})}
}

// copyOut reads the terminal until it fails (every process holding it went
// away, or closeRead), logging it as stdout and writing it to the sessions.
func (c *console) copyOut(lw *logWriter) {
	pr, pw := io.Pipe()
	logged := make(chan struct{})
	go func() { defer close(logged); lw.copy(pr, "stdout") }()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.ptmx.Read(buf)
		if n > 0 {
			_, _ = pw.Write(buf[:n])
			c.broadcast(buf[:n])
		}
		if err != nil {
			break
		}
	}
	pw.Close()
	<-logged
}

func (c *console) broadcast(b []byte) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	for k, w := range c.subs {
		if _, err := w.Write(b); err != nil {
			delete(c.subs, k) // the session went away
		}
	}
}

// closeRead ends copyOut's read (output of a background process that keeps
// the terminal open after the container exited).
func (c *console) closeRead() { _ = c.ptmx.SetReadDeadline(time.Now()) }

// close marks the container exited and closes the terminal; sessions end.
func (c *console) close() {
	c.closeOnce.Do(func() {
		close(c.exited)
		_ = c.ptmx.Close() // ends an input write blocked on a full terminal
		c.inMu.Lock()
		c.inClosed = true
		c.inMu.Unlock()
	})
}

// eot is the terminal's end-of-file character (^D): what closing the input
// of a terminal means to the program reading it.
const eot = 0x04

// attach runs one session until the container exits, ctx ends or the
// session's input ends (the client detached; the container keeps running,
// unless StdinOnce, which then sends end-of-file).
func (c *console) attach(ctx context.Context, s cri.Streams) error {
	if s.Stdin != nil && !c.stdin {
		return errors.New("the container does not set stdin: true")
	}
	c.inMu.Lock()
	closed := c.inClosed
	c.inMu.Unlock()
	if s.Stdin != nil && closed {
		return cri.ErrStdinClosed
	}
	c.outMu.Lock()
	id := c.next
	c.next++
	if s.Stdout != nil {
		c.subs[id] = s.Stdout
	}
	c.outMu.Unlock()
	defer func() {
		c.outMu.Lock()
		delete(c.subs, id)
		c.outMu.Unlock()
	}()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case size, ok := <-s.Resize:
				if !ok {
					return
				}
				setSize(c.ptmx, size)
			case <-stop:
				return
			}
		}
	}()
	inDone := make(chan struct{})
	if s.Stdin != nil {
		go func() {
			defer close(inDone)
			buf := make([]byte, 32<<10)
			for {
				n, err := s.Stdin.Read(buf)
				if n > 0 && c.write(buf[:n]) != nil {
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	select {
	case <-c.exited:
	case <-ctx.Done():
	case <-inDone:
	}
	if s.Stdin != nil && c.once {
		c.inMu.Lock()
		if !c.inClosed {
			_, _ = c.ptmx.Write([]byte{eot})
			c.inClosed = true
		}
		c.inMu.Unlock()
	}
	return nil
}

func (c *console) write(b []byte) error {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	if c.inClosed {
		return cri.ErrStdinClosed
	}
	if _, err := c.ptmx.Write(b); err != nil {
		return fmt.Errorf("write to the terminal: %w", err)
	}
	return nil
}
