package process

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// Options configure the runtime. The zero value means defaults.
type Options struct {
	// Logger receives diagnostics (discarded by default).
	Logger logr.Logger
	// NoNamespaces disables PID and mount namespaces even when available.
	NoNamespaces bool
	// CgroupParent is the cgroup (relative to each v1 controller's hierarchy
	// root) containers are created under (default: this process's own cgroup
	// plus "/converge").
	CgroupParent string
	// StateDir, when set, persists each container (spec, PID, process start
	// time, exit status) and routes its output through named pipes there, so
	// containers outlive the agent: a later runtime with the same StateDir
	// adopts the live ones and reports the dead ones as exited (see List).
	StateDir string
}

// Runtime runs containers as host processes. Create it with New.
type Runtime struct {
	log        logr.Logger
	namespaces bool
	root       bool
	cgroups    *cgroups
	stateDir   string
	containers cri.Table[*container]
	mounts     mountPoints // mount points on the host, shared between containers (mounts.go)
}

var _ cri.Runtime = (*Runtime)(nil)

type container struct {
	id   string
	spec cri.ContainerSpec

	mu     sync.Mutex
	status cri.ContainerStatus // guarded by mu
	pid    int
	done   chan struct{}  // closed when the process exited and its output is flushed
	sent   syscall.Signal // the last signal Term or Kill sent; guarded by mu

	procStart    uint64   // the process's start time (clock ticks), against PID reuse
	pidNS        bool     // PID 1 of its own PID namespace
	adopted      bool     // started by an earlier runtime: not our child
	closeReaders func()   // adopted: closes the output pipes' read ends
	createdPaths []string // mount points or symlinks created on the host
	unmounted    bool     // its use of its mount points ended (releaseMounts); guarded by mu
	cgroupDirs   []string

	stdin   *cri.Stdin // the write end of its stdin when the spec asks for one (attach.go)
	console *console   // the terminal of a TTY container (console.go)
}

// New returns a process runtime. It probes once whether PID and mount
// namespaces work here.
func New(opts Options) *Runtime {
	r := &Runtime{log: opts.Logger, root: os.Geteuid() == 0}
	if r.root && !opts.NoNamespaces {
		r.namespaces = probeNamespaces()
	}
	r.cgroups = newCgroups(opts.CgroupParent, r.log)
	if opts.StateDir != "" {
		r.stateDir = opts.StateDir
		if err := r.load(); err != nil {
			r.log.Error(err, "Adopting the containers of an earlier runtime failed", "stateDir", r.stateDir)
		}
	}
	r.log.V(1).Info("Process runtime ready", "namespaces", r.namespaces, "root", r.root, "stateDir", r.stateDir)
	return r
}

// Namespaces reports whether containers get their own PID and mount namespaces.
func (r *Runtime) Namespaces() bool { return r.namespaces }

// PrivateMounts reports whether mounts stay inside the container: only with
// mount namespaces, since without them mounts are symlinks on the host
// (cri.PrivateMounter).
func (r *Runtime) PrivateMounts() bool { return r.namespaces }

// Name implements cri.Runtime.
func (r *Runtime) Name() string { return "process" }

func probeNamespaces() bool {
	cmd := exec.Command("/proc/self/exe")
	cmd.Path = "/bin/true"
	if _, err := os.Stat("/bin/true"); err != nil {
		return false
	}
	cmd.Args = []string{"true"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID}
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := enterMountNamespace(); err != nil {
			errc <- err
			return
		}
		errc <- cmd.Run()
	}()
	return <-errc == nil
}

// readOnlyRoot makes the root mount read-only in the calling thread's
// private mount namespace (the host's stays writable); the mounts under it
// (the container's own, /dev, /proc, a tmpfs /tmp) keep their modes.
func readOnlyRoot() error {
	if err := syscall.Mount("", "/", "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("make the root filesystem read-only: %w", err)
	}
	return nil
}

// enterMountNamespace moves the calling (locked) thread into a new private
// mount namespace.
func enterMountNamespace() error {
	if err := syscall.Unshare(syscall.CLONE_NEWNS | syscall.CLONE_FS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	return nil
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validate(spec cri.ContainerSpec) error {
	var errs []error
	if spec.Name == "" {
		errs = append(errs, errors.New("container name is empty"))
	}
	if spec.LogPath == "" {
		errs = append(errs, errors.New("log path is empty"))
	}
	if len(spec.Args) == 0 {
		errs = append(errs, fmt.Errorf("the process runtime runs `command`; image %q has no local entrypoint (set command)", spec.Image))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", cri.ErrInvalidSpec, errors.Join(errs...))
	}
	return nil
}

// Start implements cri.Runtime.
func (r *Runtime) Start(ctx context.Context, spec cri.ContainerSpec) (string, error) {
	spec = withPause(spec)
	if err := validate(spec); err != nil {
		return "", err
	}
	if spec.ReadOnlyRootfs && !r.namespaces {
		return "", fmt.Errorf("%w: a read-only root filesystem needs mount namespaces (run as root)", cri.ErrInvalidSpec)
	}
	path := spec.Args[0]
	if isPause(spec) {
		path = "/proc/self/exe" // this binary, as the pause process (pause.go)
	} else if filepath.Base(path) == path {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: command %q: %w", cri.ErrInvalidSpec, path, err)
		}
		path = p
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return "", fmt.Errorf("%w: command %q is not an executable file on this host", cri.ErrInvalidSpec, spec.Args[0])
	}
	if spec.WorkingDir != "" {
		if err := os.MkdirAll(spec.WorkingDir, 0o755); err != nil {
			return "", fmt.Errorf("create working dir %s: %w", spec.WorkingDir, err)
		}
	}
	c := &container{id: newID(), spec: spec, done: make(chan struct{})}
	c.status = cri.ContainerStatus{ID: c.id, State: cri.StateCreated}

	logf, err := os.OpenFile(spec.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return "", fmt.Errorf("open log %s: %w", spec.LogPath, err)
	}
	lw := &logWriter{f: logf}
	var outR, outW, errR, errW *os.File
	switch {
	case spec.TTY:
		// The terminal replaces stdin, stdout and stderr; no FIFOs, so a TTY
		// container does not outlive the agent holding its terminal.
		var ptmx *os.File
		if ptmx, outW, err = pty.Open(); err != nil {
			err = fmt.Errorf("open terminal: %w", err)
		} else {
			c.console = newConsole(ptmx, spec.Stdin, spec.StdinOnce)
			errW = outW
		}
	case r.stateDir != "":
		outW, errW, outR, errR, err = r.openFIFOs(c.id)
	default:
		outR, outW, errR, errW, err = pipes()
	}
	if err != nil {
		logf.Close()
		return "", err
	}
	target, err := r.target(spec.TargetID)
	if err != nil {
		logf.Close()
		closeAll(outR, outW, errR, errW)
		c.closeConsole()
		return "", err
	}

	cmd := &exec.Cmd{Path: path, Args: spec.Args, Env: spec.Env, Dir: spec.WorkingDir, Stdout: outW, Stderr: errW}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	var stdinR *os.File
	if spec.TTY {
		cmd.Stdin = outW
	} else if spec.Stdin {
		var stdinW *os.File
		if stdinR, stdinW, err = os.Pipe(); err != nil {
			logf.Close()
			closeAll(outR, outW, errR, errW)
			return "", fmt.Errorf("create stdin pipe: %w", err)
		}
		cmd.Stdin = stdinR
		c.stdin = cri.NewStdin(stdinW, spec.StdinOnce, nil)
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if spec.TTY {
		// Its own session, the terminal its controlling terminal (fd 0).
		attr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	if r.namespaces && target.pid == 0 {
		attr.Cloneflags = syscall.CLONE_NEWPID
	}
	cred, err := credential(spec)
	if err != nil {
		logf.Close()
		closeAll(outR, outW, errR, errW)
		if stdinR != nil {
			stdinR.Close()
		}
		c.stdin.Close()
		c.closeConsole()
		r.forget(c.id)
		return "", err
	}
	attr.Credential = cred
	cmd.SysProcAttr = attr
	c.cgroupDirs = r.cgroups.create(c.id, spec.Resources)

	startErr := make(chan error, 1)
	r.mounts.acquire(targets(spec.Mounts))
	if r.namespaces {
		go func() {
			goruntime.LockOSThread() // never unlocked: the thread and its namespace die with the goroutine
			if err := enterMountNamespace(); err != nil {
				startErr <- err
				return
			}
			created, err := bindMounts(spec.Mounts)
			c.createdPaths = created
			if err != nil {
				startErr <- err
				return
			}
			if spec.ReadOnlyRootfs {
				if err := readOnlyRoot(); err != nil {
					startErr <- err
					return
				}
			}
			if target.pid != 0 {
				// kubectl debug --target: the target's PID namespace.
				if err := joinPIDNamespace(target.pid); err != nil {
					startErr <- err
					return
				}
			}
			startErr <- cmd.Start()
		}()
	} else {
		created, err := symlinkMounts(spec.Mounts)
		c.createdPaths = created
		if err != nil {
			startErr <- err
		} else {
			startErr <- cmd.Start()
		}
	}
	err = <-startErr
	closeAll(outW, errW)
	if stdinR != nil {
		stdinR.Close()
	}
	if err != nil {
		c.stdin.Close()
		c.closeConsole()
		closeAll(outR, errR)
		logf.Close()
		r.cgroups.remove(c.cgroupDirs)
		r.mounts.release(targets(spec.Mounts), c.createdPaths)
		r.forget(c.id)
		return "", fmt.Errorf("start container %s of pod %s/%s: %w", spec.Name, spec.PodNamespace, spec.PodName, err)
	}
	r.cgroups.attach(c.cgroupDirs, cmd.Process.Pid)
	c.mu.Lock()
	c.pid = cmd.Process.Pid
	c.pidNS = r.namespaces && target.pid == 0
	if _, st, err := procStat(c.pid); err == nil {
		c.procStart = st
	}
	c.status.State = cri.StateRunning
	c.status.StartedAt = time.Now()
	c.status.PID = c.pid
	c.mu.Unlock()
	r.containers.Add(c.id, c)
	r.save(c)

	var copiers sync.WaitGroup
	if c.console != nil {
		copiers.Add(1)
		go func() { defer copiers.Done(); c.console.copyOut(lw) }()
	} else {
		copiers.Add(2)
		go func() { defer copiers.Done(); lw.copy(outR, "stdout") }()
		go func() { defer copiers.Done(); lw.copy(errR, "stderr") }()
	}
	go func() {
		werr := cmd.Wait()
		finished := time.Now()
		// Kill leftovers of the group so the pipes close.
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		flushed := make(chan struct{})
		go func() { copiers.Wait(); close(flushed) }()
		select {
		case <-flushed:
		case <-time.After(2 * time.Second):
			closeAll(outR, errR)
			if c.console != nil {
				c.console.closeRead()
			}
			<-flushed
		}
		c.closeConsole()
		logf.Close()
		code := exitCode(cmd.ProcessState, werr)
		reason := "Completed"
		if code != 0 {
			reason = "Error"
		}
		if r.cgroups.oomKilled(c.cgroupDirs) {
			reason = "OOMKilled"
		}
		c.stdin.Close()
		c.mu.Lock()
		c.status.State = cri.StateExited
		c.status.ExitCode = code
		c.status.FinishedAt = finished
		c.status.Reason = reason
		c.status.PID = 0
		c.mu.Unlock()
		r.releaseMounts(c)
		r.save(c)
		close(c.done)
	}()
	return c.id, nil
}

func credential(spec cri.ContainerSpec) (*syscall.Credential, error) {
	if spec.RunAsUser == nil && spec.RunAsGroup == nil {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: runAsUser/runAsGroup need the agent to run as root", cri.ErrInvalidSpec)
	}
	uid := uint32(os.Geteuid())
	if spec.RunAsUser != nil {
		uid = uint32(*spec.RunAsUser)
	}
	gid := uint32(0)
	if spec.RunAsGroup != nil {
		gid = uint32(*spec.RunAsGroup)
	} else if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			gid = uint32(g)
		}
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return 128
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
	return ps.ExitCode()
}

// Status implements cri.Runtime.
func (r *Runtime) Status(_ context.Context, id string) (cri.ContainerStatus, error) {
	return r.containers.Status(id)
}

// Wait implements cri.Runtime.
func (r *Runtime) Wait(ctx context.Context, id string) (cri.ContainerStatus, error) {
	return r.containers.Wait(ctx, id)
}

// Stop implements cri.Runtime.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	return r.containers.Stop(ctx, id, grace)
}

// releaseMounts ends c's use of its mount points on the host, once: when it
// exited (its mount namespace went with it) or when it is removed.
func (r *Runtime) releaseMounts(c *container) {
	c.mu.Lock()
	done := c.unmounted
	c.unmounted = true
	c.mu.Unlock()
	if !done {
		r.mounts.release(targets(c.spec.Mounts), c.createdPaths)
	}
}

// Remove implements cri.Runtime.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	c, err := r.containers.Get(id)
	if err != nil {
		return nil
	}
	select {
	case <-c.done:
	default:
		if err := r.Stop(ctx, id, 0); err != nil {
			return fmt.Errorf("remove container %s: %w", id, err)
		}
	}
	r.containers.Delete(id)
	r.cgroups.remove(c.cgroupDirs)
	r.releaseMounts(c)
	r.forget(id)
	return nil
}

// Status implements cri.Tracked.
func (c *container) Status() cri.ContainerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Done implements cri.Tracked.
func (c *container) Done() <-chan struct{} { return c.done }

// Term implements cri.Tracked: SIGTERM to the process, or to its group
// when it is not PID 1 of its own PID namespace.
func (c *container) Term() {
	c.mu.Lock()
	c.sent = syscall.SIGTERM
	pid, pidNS := c.pid, c.pidNS
	c.mu.Unlock()
	if pidNS {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	} else {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
	}
}

// Kill implements cri.Tracked: SIGKILL to the process and its group.
func (c *container) Kill() {
	c.mu.Lock()
	c.sent = syscall.SIGKILL
	pid := c.pid
	c.mu.Unlock()
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// closeAll closes the files that are not nil (one may appear twice).
func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// closeConsole closes the terminal of a TTY container (nil-safe).
func (c *container) closeConsole() {
	if c.console != nil {
		c.console.close()
	}
}

// target is the running container TargetID names, whose PID namespace a
// new container joins (nsTarget{} when id is empty or containers get no
// namespaces of their own).
func (r *Runtime) target(id string) (nsTarget, error) {
	if id == "" || !r.namespaces {
		return nsTarget{}, nil
	}
	t, err := r.containers.Get(id)
	if err != nil {
		return nsTarget{}, fmt.Errorf("%w: target container %s: %w", cri.ErrInvalidSpec, id, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.State != cri.StateRunning || t.pid == 0 {
		return nsTarget{}, fmt.Errorf("%w: target container %s is not running", cri.ErrInvalidSpec, id)
	}
	return nsTarget{pid: t.pid, pidNS: t.pidNS}, nil
}

// pipes returns two anonymous pipes (stdout and stderr), read ends first.
func pipes() (outR, outW, errR, errW *os.File, err error) {
	outR, outW, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("create stdout pipe: %w", err)
	}
	errR, errW, err = os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, nil, fmt.Errorf("create stderr pipe: %w", err)
	}
	return outR, outW, errR, errW, nil
}

// Exec implements cri.Runtime.
func (r *Runtime) Exec(ctx context.Context, id string, argv []string) (int, []byte, error) {
	cmd, target, err := r.execCommand(ctx, id, argv)
	if err != nil {
		return 0, nil, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := r.startIn(target, cmd); err != nil {
		return 0, nil, fmt.Errorf("exec in container %s: %w", id, err)
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return 0, out.Bytes(), fmt.Errorf("exec in container %s: %w", id, ctx.Err())
	}
	return exitCode(cmd.ProcessState, werr), out.Bytes(), nil
}

// execCommand prepares argv to run in container id: the container's env,
// working dir and user, its own process group (killed as a whole when ctx
// ends). It returns the container process for startIn.
func (r *Runtime) execCommand(ctx context.Context, id string, argv []string) (*exec.Cmd, nsTarget, error) {
	c, err := r.containers.Get(id)
	if err != nil {
		return nil, nsTarget{}, err
	}
	if len(argv) == 0 {
		return nil, nsTarget{}, fmt.Errorf("%w: exec without a command", cri.ErrInvalidSpec)
	}
	c.mu.Lock()
	pid, pidNS, state := c.pid, c.pidNS, c.status.State
	c.mu.Unlock()
	if state != cri.StateRunning {
		return nil, nsTarget{}, fmt.Errorf("exec in container %s: it is %s", id, state)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = c.spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = c.spec.WorkingDir
	cmd.WaitDelay = time.Second
	cred, err := credential(c.spec)
	if err != nil {
		return nil, nsTarget{}, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return cmd.Process.Kill()
	}
	// A container that joined a target's PID namespace (kubectl debug
	// --target) runs its execs there too.
	return cmd, nsTarget{pid: pid, pidNS: pidNS || (c.spec.TargetID != "" && r.namespaces)}, nil
}

// nsTarget is the container process whose namespaces an exec joins.
type nsTarget struct {
	pid   int
	pidNS bool // it has a PID namespace of its own
}

// startIn starts cmd in the namespaces of the container process t when
// containers get their own: its mount namespace, and its PID namespace when
// it has one.
func (r *Runtime) startIn(t nsTarget, cmd *exec.Cmd) error {
	if !r.namespaces {
		return cmd.Start()
	}
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := joinMountNamespace(t.pid); err != nil {
			errc <- err
			return
		}
		if t.pidNS {
			if err := joinPIDNamespace(t.pid); err != nil {
				errc <- err
				return
			}
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// joinPIDNamespace makes the calling (locked) thread's children start in the
// PID namespace of pid.
func joinPIDNamespace(pid int) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/pid", pid))
	if err != nil {
		return fmt.Errorf("open pid namespace: %w", err)
	}
	defer f.Close()
	if _, _, e := syscall.RawSyscall(sysSetns, f.Fd(), syscall.CLONE_NEWPID, 0); e != 0 {
		return fmt.Errorf("join pid namespace: %w", e)
	}
	return nil
}

func joinMountNamespace(pid int) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err != nil {
		return fmt.Errorf("open mount namespace: %w", err)
	}
	defer f.Close()
	if err := syscall.Unshare(syscall.CLONE_FS); err != nil {
		return fmt.Errorf("unshare fs: %w", err)
	}
	if _, _, e := syscall.RawSyscall(sysSetns, f.Fd(), syscall.CLONE_NEWNS, 0); e != 0 {
		return fmt.Errorf("join mount namespace: %w", e)
	}
	return nil
}
