package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/creack/pty"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StreamExecer = (*Runtime)(nil)

// ptyDrain bounds how long output is read from a terminal after the command
// exited (a background process may keep the terminal open).
const ptyDrain = 2 * time.Second

// ExecStream implements cri.StreamExecer: argv runs as in Exec, with s's
// streams; with TTY on a new pseudo-terminal that is the session's
// controlling terminal, resized as s.Resize says.
func (r *Runtime) ExecStream(ctx context.Context, id string, argv []string, s cri.Streams) (int, error) {
	cmd, target, err := r.execCommand(ctx, id, argv)
	if err != nil {
		return 0, err
	}
	if s.TTY {
		return r.execTTY(ctx, id, target, cmd, s)
	}
	var stdin io.WriteCloser
	if s.Stdin != nil {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return 0, fmt.Errorf("exec in container %s: %w", id, err)
		}
	}
	cmd.Stdout, cmd.Stderr = orDiscard(s.Stdout), orDiscard(s.Stderr)
	if err := r.startIn(target, cmd); err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, err)
	}
	if stdin != nil {
		go func() {
			_, _ = io.Copy(stdin, s.Stdin)
			_ = stdin.Close()
		}()
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, ctx.Err())
	}
	return exitCode(cmd.ProcessState, werr), nil
}

func (r *Runtime) execTTY(ctx context.Context, id string, target nsTarget, cmd *exec.Cmd, s cri.Streams) (int, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: open terminal: %w", id, err)
	}
	defer ptmx.Close()
	if !slices.ContainsFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") }) {
		cmd.Env = append(cmd.Env, "TERM=xterm")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr.Setpgid = false
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0
	// Start on the client's size (it sends one at once).
	if size, ok := cri.InitialSize(ctx, s.Resize, cri.InitialSizeWait); ok {
		setSize(ptmx, size)
	}
	err = r.startIn(target, cmd)
	tty.Close()
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case size, ok := <-s.Resize:
				if !ok {
					return
				}
				setSize(ptmx, size)
			case <-stop:
				return
			}
		}
	}()
	if s.Stdin != nil {
		go func() { _, _ = io.Copy(ptmx, s.Stdin) }()
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(orDiscard(s.Stdout), ptmx) // ends with EIO once every holder of the terminal closed it
	}()
	werr := cmd.Wait()
	select {
	case <-copied:
	case <-time.After(ptyDrain):
		_ = ptmx.SetReadDeadline(time.Now())
		<-copied
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, ctx.Err())
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return 0, fmt.Errorf("exec in container %s: %w", id, werr)
	}
	return exitCode(cmd.ProcessState, werr), nil
}

func setSize(f *os.File, size cri.TermSize) {
	if size.Width == 0 || size.Height == 0 {
		return
	}
	_ = pty.Setsize(f, &pty.Winsize{Cols: size.Width, Rows: size.Height})
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
