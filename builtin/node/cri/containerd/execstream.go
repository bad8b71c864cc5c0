package containerd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/converge-dev/converge/builtin/node/cri"
)

var _ cri.StreamExecer = (*Runtime)(nil)

// ExecStream implements cri.StreamExecer: a task exec with the container's
// process spec (environment, user, working directory) and cmd, its stdio
// connected to s through FIFOs; with TTY on a terminal the shim allocates,
// resized as s.Resize says. End of stdin closes the command's stdin.
func (r *Runtime) ExecStream(ctx context.Context, id string, cmd []string, s cri.Streams) (int, error) {
	ctx = r.nsCtx(ctx)
	if len(cmd) == 0 {
		return 0, fmt.Errorf("exec in container %s: empty command", id)
	}
	task, exited, err := r.taskAndExit(ctx, id)
	if err != nil {
		return 0, err
	}
	if task == nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, errNoTask)
	}
	select {
	case <-exited:
		return 0, fmt.Errorf("exec in container %s: %w", id, errNotRunning)
	default:
	}
	spec, err := task.Spec(ctx)
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: read spec: %w", id, err)
	}
	pspec := *spec.Process
	pspec.Args = cmd
	pspec.Terminal = s.TTY
	if s.TTY && !slices.ContainsFunc(pspec.Env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") }) {
		pspec.Env = append(slices.Clone(pspec.Env), "TERM=xterm")
	}

	// The client's first size (it sends one at once) sizes the terminal from the outset.
	if size, ok := cri.InitialSize(ctx, s.Resize, cri.InitialSizeWait); ok && s.TTY {
		pspec.ConsoleSize = &specs.Box{Width: uint(size.Width), Height: uint(size.Height)}
	}
	stdinEOF := make(chan struct{})
	var stdin io.Reader
	if s.Stdin != nil {
		stdin = &eofNotifier{r: s.Stdin, eof: stdinEOF}
	}
	stderr := s.Stderr
	if s.TTY {
		stderr = nil // a terminal has one output
	}
	opts := []cio.Opt{cio.WithStreams(stdin, orDiscard(s.Stdout), orDiscard(stderr))}
	if s.TTY {
		opts = append(opts, cio.WithTerminal)
	}
	proc, err := task.Exec(ctx, "exec-"+newID()[:16], &pspec, cio.NewCreator(opts...))
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, err)
	}
	dctx := context.WithoutCancel(ctx)
	defer func() { _, _ = proc.Delete(dctx, client.WithProcessKill) }()
	exitCh, err := proc.Wait(dctx)
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: wait: %w", id, err)
	}
	if err := proc.Start(ctx); err != nil {
		return 0, fmt.Errorf("exec in container %s: start %q: %w", id, cmd[0], err)
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
				_ = proc.Resize(dctx, uint32(size.Width), uint32(size.Height))
			case <-stdinEOF:
				_ = proc.CloseIO(dctx, client.WithStdinCloser)
				stdinEOF = nil
			case <-stop:
				return
			}
		}
	}()
	if s.Stdin == nil {
		_ = proc.CloseIO(dctx, client.WithStdinCloser)
	}
	var es client.ExitStatus
	select {
	case es = <-exitCh:
	case <-ctx.Done():
		_ = proc.Kill(dctx, syscall.SIGKILL)
		<-exitCh
		return 0, fmt.Errorf("exec in container %s: %w", id, ctx.Err())
	}
	proc.IO().Wait()
	code, _, err := es.Result()
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", id, err)
	}
	return int(code), nil
}

// eofNotifier closes eof once r reached its end.
type eofNotifier struct {
	r    io.Reader
	eof  chan struct{}
	done bool
}

func (e *eofNotifier) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !e.done {
		e.done = true
		close(e.eof)
	}
	return n, err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
