package process

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// console is the pseudo-terminal of a container started with TTY: the
// container's stdin, stdout and stderr are the terminal; the runtime holds
// its master side, logs what it reads from it as stdout and passes it to
// the attach sessions (cri.Console), which type into it and resize it.
type console struct {
	ptmx *os.File
	*cri.Console
	stdin *cri.Stdin // input, when the spec asks for stdin (nil: none)
}

func newConsole(ptmx *os.File, stdin, once bool) *console {
	c := &console{ptmx: ptmx}
	if stdin {
		c.stdin = cri.NewStdin(&terminalInput{f: ptmx}, once, nil)
	}
	c.Console = cri.NewConsole(c.stdin, func(size cri.TermSize) {
		_ = pty.Setsize(ptmx, &pty.Winsize{Cols: size.Width, Rows: size.Height})
	})
	return c
}

// copyOut reads the terminal until it fails (every process holding it went
// away, or closeRead), logging it as stdout and passing it to the sessions.
func (c *console) copyOut(lw *logWriter) {
	pr, pw := io.Pipe()
	logged := make(chan struct{})
	go func() { defer close(logged); lw.copy(pr, "stdout") }()
	_, _ = io.Copy(io.MultiWriter(pw, c.Console), c.ptmx)
	pw.Close()
	<-logged
}

// closeRead ends copyOut's read (output of a background process that keeps
// the terminal open after the container exited).
func (c *console) closeRead() { _ = c.ptmx.SetReadDeadline(time.Now()) }

// close ends the sessions and closes the terminal: the container exited.
func (c *console) close() {
	c.Console.Close()
	c.stdin.Close()
	_ = c.ptmx.Close()
}

// terminalInput writes to the terminal. Closing it (StdinOnce) types the
// terminal's end-of-file character, ^D, which is what closing the input of
// a terminal means to the program reading it; the terminal stays open.
type terminalInput struct {
	f    *os.File
	once sync.Once
}

func (t *terminalInput) Write(p []byte) (int, error) { return t.f.Write(p) }

func (t *terminalInput) Close() error {
	t.once.Do(func() { _, _ = t.f.Write([]byte{0x04}) })
	return nil
}
