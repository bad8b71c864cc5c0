package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotInstalled is returned by Start when the containerd or runc binary is not
// found on PATH.
var ErrNotInstalled = errors.New("containerd is not installed: run `apt-get install -y containerd runc`")

// maxSocketPath is the longest path a unix socket address can have on Linux
// (sun_path is 108 bytes including the terminating NUL).
const maxSocketPath = 107

// Options configure Start. The zero value of every field but Dir means its default.
type Options struct {
	// Dir holds the config file, root and state directories, the sockets and the
	// daemon's log. Required; created when missing. Its path must be short enough
	// for a unix socket (about 80 characters).
	Dir string
	// Binary is the containerd executable (default: "containerd" looked up on PATH).
	Binary string
	// Output receives the daemon's stdout and stderr (default: Dir/containerd.log).
	Output *os.File
	// StartTimeout bounds the wait for the socket (default 10s).
	StartTimeout time.Duration
	// StopTimeout is how long the daemon gets after SIGTERM before SIGKILL (default 5s).
	StopTimeout time.Duration
}

func (o *Options) complete() {
	if o.Binary == "" {
		o.Binary = "containerd"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 5 * time.Second
	}
}

func (o *Options) validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("daemon: Dir is required"))
	} else if !filepath.IsAbs(o.Dir) {
		errs = append(errs, fmt.Errorf("daemon: Dir %q must be absolute", o.Dir))
	} else if n := len(socketPath(o.Dir)) + len(".ttrpc"); n > maxSocketPath {
		errs = append(errs, fmt.Errorf("daemon: Dir %q is too long for a unix socket path (%d > %d bytes)", o.Dir, n, maxSocketPath))
	}
	if o.StartTimeout < 0 || o.StopTimeout < 0 {
		errs = append(errs, errors.New("daemon: timeouts must not be negative"))
	}
	return errors.Join(errs...)
}

func socketPath(dir string) string { return filepath.Join(dir, "containerd.sock") }

// Address is the socket of a daemon started with Options.Dir = dir, for
// clients that connect to it from another process (`converge image import`).
func Address(dir string) string { return socketPath(dir) }

// Daemon is a running containerd started by Start.
type Daemon struct {
	address string
	logPath string
	pid     int
	done    chan struct{}
	err     error // set before done is closed
}

// Address is the daemon's gRPC socket path, for client.New.
func (d *Daemon) Address() string { return d.address }

// PID is the daemon's process ID.
func (d *Daemon) PID() int { return d.pid }

// Wait blocks until the daemon has exited. It returns nil when the daemon was
// stopped because Start's context ended and exited on SIGTERM, and an error
// describing the exit otherwise.
func (d *Daemon) Wait() error {
	<-d.done
	return d.err
}

// Done is closed once the daemon has exited.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Start writes the config, launches containerd and returns once its socket
// accepts connections. The daemon stops when ctx ends.
func Start(ctx context.Context, opts Options) (*Daemon, error) {
	opts.complete()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", opts.Binary, ErrNotInstalled)
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return nil, fmt.Errorf("find runc: %w", ErrNotInstalled)
	}
	for _, sub := range []string{"root", "state"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("create containerd %s dir: %w", sub, err)
		}
	}
	sock := socketPath(opts.Dir)
	// A socket left by a daemon that was killed would make containerd fail to listen.
	for _, p := range []string{sock, sock + ".ttrpc"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	configPath := filepath.Join(opts.Dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config(opts.Dir, sock)), 0o600); err != nil {
		return nil, fmt.Errorf("write containerd config: %w", err)
	}

	out := opts.Output
	logPath := ""
	if out == nil {
		logPath = filepath.Join(opts.Dir, "containerd.log")
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open containerd log: %w", err)
		}
		defer f.Close() // the child keeps its own descriptor
		out = f
	}

	cmd := exec.Command(bin, "--config", configPath)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // terminal signals meant for the parent do not reach it
		Pdeathsig: syscall.SIGTERM, // nor does it outlive a parent that dies without cleaning up
	}
	// The parent-death signal fires when the thread that forked the child
	// ends, not the process: Go ends a thread whose locked goroutine exits
	// (pod network setup does, per pod). So the fork runs on a thread locked
	// until containerd has exited.
	startErr := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, after containerd
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		exited <- cmd.Wait()
	}()
	if err := <-startErr; err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	d := &Daemon{address: sock, logPath: logPath, pid: cmd.Process.Pid, done: make(chan struct{})}

	stopping := make(chan struct{})
	go d.supervise(ctx, cmd.Process, exited, stopping, opts.StopTimeout)

	if err := waitForSocket(ctx, sock, opts.StartTimeout, d.done); err != nil {
		select {
		case <-d.done:
			return nil, fmt.Errorf("containerd exited during start-up (%v)%s", d.err, d.logTail())
		default:
		}
		close(stopping)
		<-d.done
		return nil, fmt.Errorf("wait for containerd socket %s: %w%s", sock, err, d.logTail())
	}
	return d, nil
}

// supervise stops the daemon when ctx ends (or stopping is closed) and records
// how it exited.
func (d *Daemon) supervise(ctx context.Context, p *os.Process, exited <-chan error, stopping <-chan struct{}, grace time.Duration) {
	defer close(d.done)
	var requested bool
	select {
	case err := <-exited:
		d.err = exitError(err)
		return
	case <-ctx.Done():
		requested = true
	case <-stopping:
		requested = true
	}
	_ = p.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	var err error
	select {
	case err = <-exited:
	case <-timer.C:
		_ = p.Kill()
		err = <-exited
		d.err = fmt.Errorf("containerd did not stop within %s of SIGTERM and was killed", grace)
		return
	}
	var ee *exec.ExitError
	if requested && errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			err = nil
		}
	}
	d.err = exitError(err)
}

func exitError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("containerd exited: %w", err)
}

func waitForSocket(ctx context.Context, sock string, timeout time.Duration, done <-chan struct{}) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.DialTimeout("unix", sock, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return errors.New("daemon exited")
		case <-deadline.C:
			return fmt.Errorf("not ready after %s: %w", timeout, err)
		case <-tick.C:
		}
	}
}

// logTail returns the end of the daemon's log, to explain a failed start.
func (d *Daemon) logTail() string {
	if d.logPath == "" {
		return ""
	}
	b, err := os.ReadFile(d.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return "; log " + d.logPath + " ends with:\n" + string(bytes.TrimSpace(b))
}

// config renders the daemon's config file (TOML, version 2 as containerd 1.6 reads it).
func config(dir, sock string) string {
	q := strconv.Quote
	var b strings.Builder
	b.WriteString("version = 2\n")
	fmt.Fprintf(&b, "root = %s\n", q(filepath.Join(dir, "root")))
	fmt.Fprintf(&b, "state = %s\n", q(filepath.Join(dir, "state")))
	// The CRI plugin needs CNI and a kubelet; snapshotters this platform lacks only log warnings.
	b.WriteString(`disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", ` +
		`"io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]` + "\n")
	fmt.Fprintf(&b, "\n[grpc]\n  address = %s\n", q(sock))
	fmt.Fprintf(&b, "\n[ttrpc]\n  address = %s\n", q(sock+".ttrpc"))
	return b.String()
}
