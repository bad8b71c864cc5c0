package runtimetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// Options describe the runtime under test. Helper is required.
type Options struct {
	// Helper is the path of the helper binary as containers see it (for host
	// runtimes the path BuildHelper returned; for containerd its path inside
	// Image; the simulated runtime only compares it).
	Helper string
	// Image is put in every spec (default "converge.test/helper:latest").
	Image string
	// MissingImage is an image the runtime does not have (default
	// "converge.invalid/missing:0").
	MissingImage string
	// WorkingDir is a directory that exists, or is created, in containers
	// (default "/tmp").
	WorkingDir string
	// EnforcesReadOnlyMounts: writes to a ReadOnly mount fail.
	EnforcesReadOnlyMounts bool
	// EnforcesReadOnlyRootfs: with ReadOnlyRootfs, writes to the root
	// filesystem fail while a writable Mount stays writable. Without it the
	// suite does not start such a container.
	EnforcesReadOnlyRootfs bool
	// HostPIDs: Status reports the host PID of a running container.
	HostPIDs bool
	// SetsSysctls: a container's Sysctls are set in its own namespaces
	// (kernel.shm_rmid_forced in its IPC namespace). Without it the suite
	// does not check them.
	SetsSysctls bool
	// Timeout bounds each wait for a container (default 20 s).
	Timeout time.Duration
}

func (o *Options) complete(t *testing.T) {
	if o.Helper == "" {
		t.Fatal("runtimetest: Options.Helper is required")
	}
	if o.Image == "" {
		o.Image = "converge.test/helper:latest"
	}
	if o.MissingImage == "" {
		o.MissingImage = "converge.invalid/missing:0"
	}
	if o.WorkingDir == "" {
		o.WorkingDir = "/tmp"
	}
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
}

// criLine matches one line of the CRI log format.
var criLine = regexp.MustCompile(`^(\S+) (stdout|stderr) (F|P) (.*)$`)

// LogLine is a parsed CRI log line.
type LogLine struct {
	Time   time.Time
	Stream string
	Text   string
}

// ReadLog parses a CRI-format log file; it fails the test on a malformed line.
func ReadLog(t testing.TB, path string) []LogLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("read log %s: %v", path, err)
	}
	defer f.Close()
	var lines []LogLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := criLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("log %s: line %q is not in the CRI format", path, sc.Text())
		}
		ts, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatalf("log %s: timestamp %q: %v", path, m[1], err)
		}
		lines = append(lines, LogLine{Time: ts, Stream: m[2], Text: m[4]})
	}
	return lines
}

type suite struct {
	t    *testing.T
	opts Options
	rt   cri.Runtime
	n    int
	mu   sync.Mutex
}

func (s *suite) spec(t *testing.T, script ...string) cri.ContainerSpec {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	dir := t.TempDir()
	return cri.ContainerSpec{
		PodUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), PodNamespace: "conformance",
		PodName: fmt.Sprintf("pod-%d", n), Name: "c",
		Image:   s.opts.Image,
		Args:    append([]string{s.opts.Helper}, script...),
		LogPath: filepath.Join(dir, "0.log"),
	}
}

func (s *suite) start(t *testing.T, spec cri.ContainerSpec) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), s.opts.Timeout)
	defer cancel()
	id, err := s.rt.Start(ctx, spec)
	if err != nil {
		t.Fatalf("Start(%v): %v", spec.Args, err)
	}
	if id == "" {
		t.Fatal("Start returned an empty ID")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 15*time.Second)
		defer cancel()
		_ = s.rt.Stop(ctx, id, 0)
		_ = s.rt.Remove(ctx, id)
	})
	return id
}

func (s *suite) wait(t *testing.T, id string) cri.ContainerStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), s.opts.Timeout)
	defer cancel()
	st, err := s.rt.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	if st.State != cri.StateExited {
		t.Fatalf("Wait(%s) returned state %s, want Exited", id, st.State)
	}
	return st
}

func (s *suite) waitRunning(t *testing.T, id string) cri.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(s.opts.Timeout)
	for {
		st, err := s.rt.Status(t.Context(), id)
		if err != nil {
			t.Fatalf("Status(%s): %v", id, err)
		}
		if st.State == cri.StateRunning {
			return st
		}
		if st.State == cri.StateExited || time.Now().After(deadline) {
			t.Fatalf("container %s is %s (exit %d), want Running", id, st.State, st.ExitCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLog waits until the log holds a line with text on stream.
func (s *suite) waitLog(t *testing.T, path, stream, text string) {
	t.Helper()
	deadline := time.Now().Add(s.opts.Timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			for _, l := range ReadLog(t, path) {
				if l.Stream == stream && l.Text == text {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("log %s never showed %s %q", path, stream, text)
}

func texts(lines []LogLine, stream string) []string {
	var out []string
	for _, l := range lines {
		if l.Stream == stream {
			out = append(out, l.Text)
		}
	}
	return out
}

// RunConformance runs the conformance suite. newRuntime returns a runtime for
// one subtest (it may share one runtime between subtests); the runtime must be
// usable until the subtest's cleanups ran.
func RunConformance(t *testing.T, newRuntime func(t *testing.T) cri.Runtime, opts Options) {
	opts.complete(t)
	cases := []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"Name", testName},
		{"ExitCodes", testExitCodes},
		{"LogsCRIFormatAppended", testLogs},
		{"Env", testEnv},
		{"WorkingDir", testWorkingDir},
		{"Mounts", testMounts},
		{"ReadOnlyRootfs", testReadOnlyRootfs},
		{"Sysctls", testSysctls},
		{"StatusWhileRunning", testStatusRunning},
		{"StopGraceful", testStopGraceful},
		{"StopKillsAfterGrace", testStopKill},
		{"StopExitedIsNoop", testStopExited},
		{"Exec", testExec},
		{"UnknownID", testUnknownID},
		{"InvalidSpec", testInvalidSpec},
		{"RemoveForgets", testRemove},
		{"Concurrent", testConcurrent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, &suite{t: t, opts: opts, rt: newRuntime(t)})
		})
	}
}

func testName(t *testing.T, s *suite) {
	if s.rt.Name() == "" {
		t.Fatal("Name() is empty")
	}
}

func testExitCodes(t *testing.T, s *suite) {
	for _, code := range []int{0, 1, 3, 42} {
		spec := s.spec(t, "out", "hello", "exit", fmt.Sprint(code))
		before := time.Now().Add(-time.Second)
		id := s.start(t, spec)
		st := s.wait(t, id)
		if st.ExitCode != code {
			t.Errorf("exit %d: ExitCode = %d", code, st.ExitCode)
		}
		if st.ID != id {
			t.Errorf("status ID = %q, want %q", st.ID, id)
		}
		if st.StartedAt.Before(before) || st.FinishedAt.Before(st.StartedAt) {
			t.Errorf("exit %d: StartedAt %v FinishedAt %v out of order", code, st.StartedAt, st.FinishedAt)
		}
		if st.PID != 0 {
			t.Errorf("exit %d: exited container reports PID %d", code, st.PID)
		}
		// Status after Wait agrees.
		st2, err := s.rt.Status(t.Context(), id)
		if err != nil || st2.State != cri.StateExited || st2.ExitCode != code {
			t.Errorf("Status after exit: %+v, %v", st2, err)
		}
	}
}

func testLogs(t *testing.T, s *suite) {
	spec := s.spec(t, "out", "line one", "err", "oops", "out", "line two", "out", "")
	if err := os.WriteFile(spec.LogPath, []byte("2020-01-01T00:00:00.000000000Z stdout F earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := s.start(t, spec)
	s.wait(t, id)
	s.waitLog(t, spec.LogPath, "stdout", "line two")
	lines := ReadLog(t, spec.LogPath)
	if got, want := texts(lines, "stdout"), []string{"earlier", "line one", "line two", ""}; !slices.Equal(got, want) {
		t.Errorf("stdout lines = %q, want %q (the file must be appended to)", got, want)
	}
	if got := texts(lines, "stderr"); !slices.Equal(got, []string{"oops"}) {
		t.Errorf("stderr lines = %q, want [oops]", got)
	}
	for _, l := range lines[1:] {
		if time.Since(l.Time) > time.Minute || time.Until(l.Time) > time.Minute {
			t.Errorf("timestamp %v is not now", l.Time)
		}
	}
}

func testEnv(t *testing.T, s *suite) {
	// Names a POSIX shell cannot hold ("data-1", from a ConfigMap key through
	// envFrom) are still the process's environment: a runtime passes them on.
	spec := s.spec(t, "env", "FOO", "env", "WITH_SPACES", "env", "EMPTY", "env", "data-1", "env", "p.data-2", "env", "UNSET_VAR_X")
	spec.Env = []string{"FOO=bar", "WITH_SPACES=a b=c", "EMPTY=", "data-1=value-1", "p.data-2=value-2"}
	id := s.start(t, spec)
	if st := s.wait(t, id); st.ExitCode != 0 {
		t.Fatalf("exit code %d", st.ExitCode)
	}
	s.waitLog(t, spec.LogPath, "stdout", "UNSET_VAR_X=")
	got := texts(ReadLog(t, spec.LogPath), "stdout")
	want := []string{"FOO=bar", "WITH_SPACES=a b=c", "EMPTY=", "data-1=value-1", "p.data-2=value-2", "UNSET_VAR_X="}
	if !slices.Equal(got, want) {
		t.Errorf("env output %q, want %q", got, want)
	}
}

func testWorkingDir(t *testing.T, s *suite) {
	spec := s.spec(t, "pwd")
	spec.WorkingDir = s.opts.WorkingDir
	id := s.start(t, spec)
	s.wait(t, id)
	s.waitLog(t, spec.LogPath, "stdout", s.opts.WorkingDir)
}

func testMounts(t *testing.T, s *suite) {
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "data.txt"), []byte("from-host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(host, 0o777); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(os.TempDir(), fmt.Sprintf("converge-rt-mnt-%d-%d", os.Getpid(), time.Now().UnixNano()), "vol")
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(target)) })
	spec := s.spec(t, "cat", target+"/data.txt", "write", target+"/back.txt", "from-container")
	spec.Mounts = []cri.Mount{{HostPath: host, ContainerPath: target}}
	id := s.start(t, spec)
	if st := s.wait(t, id); st.ExitCode != 0 {
		t.Fatalf("exit code %d; log: %v", st.ExitCode, ReadLog(t, spec.LogPath))
	}
	s.waitLog(t, spec.LogPath, "stdout", "from-host")
	b, err := os.ReadFile(filepath.Join(host, "back.txt"))
	if err != nil || string(b) != "from-container" {
		t.Errorf("file written through the mount: %q, %v", b, err)
	}
	if s.opts.EnforcesReadOnlyMounts {
		ro := s.spec(t, "write", target+"/ro.txt", "x")
		ro.Mounts = []cri.Mount{{HostPath: host, ContainerPath: target, ReadOnly: true}}
		id := s.start(t, ro)
		if st := s.wait(t, id); st.ExitCode == 0 {
			t.Error("write to a read-only mount succeeded")
		}
	}
}

func testReadOnlyRootfs(t *testing.T, s *suite) {
	if !s.opts.EnforcesReadOnlyRootfs {
		return
	}
	// On a host runtime the path is the host's: removed if the write went through.
	file := fmt.Sprintf("/converge-rt-rofs-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { _ = os.Remove(file) })
	host := t.TempDir()
	if err := os.Chmod(host, 0o777); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(os.TempDir(), fmt.Sprintf("converge-rt-rofs-%d-%d", os.Getpid(), time.Now().UnixNano()))
	t.Cleanup(func() { _ = os.RemoveAll(target) })

	ro := s.spec(t, "write", target+"/through-mount.txt", "ok", "write", file, "x")
	ro.ReadOnlyRootfs = true
	ro.Mounts = []cri.Mount{{HostPath: host, ContainerPath: target}}
	if st := s.wait(t, s.start(t, ro)); st.ExitCode == 0 {
		t.Error("a write to the read-only root filesystem succeeded")
	}
	if b, err := os.ReadFile(filepath.Join(host, "through-mount.txt")); err != nil || string(b) != "ok" {
		t.Errorf("a writable mount in a read-only root: %q, %v", b, err)
	}

	rw := s.spec(t, "write", target+"/through-mount.txt", "ok")
	rw.Mounts = []cri.Mount{{HostPath: host, ContainerPath: target}}
	if st := s.wait(t, s.start(t, rw)); st.ExitCode != 0 {
		t.Errorf("without ReadOnlyRootfs: exit code %d; log: %v", st.ExitCode, ReadLog(t, rw.LogPath))
	}
}

func testSysctls(t *testing.T, s *suite) {
	if !s.opts.SetsSysctls {
		return
	}
	host, err := os.ReadFile("/proc/sys/kernel/shm_rmid_forced")
	if err != nil {
		t.Fatalf("read the host's kernel.shm_rmid_forced: %v", err)
	}
	want := "1"
	if strings.TrimSpace(string(host)) == "1" {
		want = "0"
	}
	spec := s.spec(t, "cat", "/proc/sys/kernel/shm_rmid_forced")
	spec.Sysctls = map[string]string{"kernel.shm_rmid_forced": want}
	if st := s.wait(t, s.start(t, spec)); st.ExitCode != 0 {
		t.Fatalf("exit code %d; log: %v", st.ExitCode, ReadLog(t, spec.LogPath))
	}
	s.waitLog(t, spec.LogPath, "stdout", want)
	if after, _ := os.ReadFile("/proc/sys/kernel/shm_rmid_forced"); string(after) != string(host) {
		t.Errorf("the host's kernel.shm_rmid_forced changed: %q, was %q", after, host)
	}
}

func testStatusRunning(t *testing.T, s *suite) {
	spec := s.spec(t, "out", "up", "sleep", "forever")
	id := s.start(t, spec)
	st := s.waitRunning(t, id)
	if st.StartedAt.IsZero() || !st.FinishedAt.IsZero() {
		t.Errorf("running: StartedAt %v FinishedAt %v", st.StartedAt, st.FinishedAt)
	}
	if s.opts.HostPIDs && st.PID <= 0 {
		t.Errorf("running container reports PID %d", st.PID)
	}
	s.waitLog(t, spec.LogPath, "stdout", "up")
	// Wait honours its context.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.rt.Wait(ctx, id); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait on a running container with an expiring context: %v, want DeadlineExceeded", err)
	}
}

func testStopGraceful(t *testing.T, s *suite) {
	spec := s.spec(t, "on-term", "0", "out", "ready", "sleep", "forever")
	id := s.start(t, spec)
	s.waitLog(t, spec.LogPath, "stdout", "ready")
	t0 := time.Now()
	if err := s.rt.Stop(t.Context(), id, 10*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Stop of a container that exits on SIGTERM took %v", d)
	}
	st := s.wait(t, id)
	if st.ExitCode != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0", st.ExitCode)
	}
	s.waitLog(t, spec.LogPath, "stdout", "got SIGTERM")
}

func testStopKill(t *testing.T, s *suite) {
	spec := s.spec(t, "ignore-term", "out", "ready", "sleep", "forever")
	id := s.start(t, spec)
	s.waitLog(t, spec.LogPath, "stdout", "ready")
	t0 := time.Now()
	if err := s.rt.Stop(t.Context(), id, time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	d := time.Since(t0)
	if d < 900*time.Millisecond || d > 8*time.Second {
		t.Errorf("Stop with a 1s grace of a container ignoring SIGTERM took %v", d)
	}
	st := s.wait(t, id)
	if st.ExitCode != 137 {
		t.Errorf("exit code after SIGKILL = %d, want 137", st.ExitCode)
	}
	// Unhandled SIGTERM exits 143.
	spec2 := s.spec(t, "out", "ready", "sleep", "forever")
	id2 := s.start(t, spec2)
	s.waitLog(t, spec2.LogPath, "stdout", "ready")
	if err := s.rt.Stop(t.Context(), id2, 10*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if st := s.wait(t, id2); st.ExitCode != 143 {
		t.Errorf("exit code after an unhandled SIGTERM = %d, want 143", st.ExitCode)
	}
}

func testStopExited(t *testing.T, s *suite) {
	id := s.start(t, s.spec(t, "exit", "5"))
	s.wait(t, id)
	if err := s.rt.Stop(t.Context(), id, time.Second); err != nil {
		t.Errorf("Stop of an exited container: %v", err)
	}
	st, err := s.rt.Status(t.Context(), id)
	if err != nil || st.ExitCode != 5 {
		t.Errorf("status after Stop of an exited container: %+v, %v", st, err)
	}
}

func testExec(t *testing.T, s *suite) {
	spec := s.spec(t, "out", "ready", "sleep", "forever")
	spec.Env = []string{"FROM_SPEC=yes"}
	id := s.start(t, spec)
	s.waitRunning(t, id)
	code, out, err := s.rt.Exec(t.Context(), id, []string{s.opts.Helper, "out", "hi", "env", "FROM_SPEC", "exit", "4"})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if code != 4 || strings.TrimSpace(string(out)) != "hi\nFROM_SPEC=yes" {
		t.Errorf("Exec = %d %q, want 4 \"hi\\nFROM_SPEC=yes\\n\"", code, out)
	}
	code, _, err = s.rt.Exec(t.Context(), id, []string{s.opts.Helper, "exit", "0"})
	if err != nil || code != 0 {
		t.Errorf("Exec exit 0 = %d, %v", code, err)
	}
	// The container keeps running.
	s.waitRunning(t, id)
	if _, _, err := s.rt.Exec(t.Context(), "no-such-container", []string{s.opts.Helper}); !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("Exec in an unknown container: %v, want ErrNotFound", err)
	}
}

func testUnknownID(t *testing.T, s *suite) {
	if _, err := s.rt.Status(t.Context(), "no-such-container"); !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("Status: %v, want ErrNotFound", err)
	}
	if _, err := s.rt.Wait(t.Context(), "no-such-container"); !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("Wait: %v, want ErrNotFound", err)
	}
	if err := s.rt.Stop(t.Context(), "no-such-container", 0); !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("Stop: %v, want ErrNotFound", err)
	}
	if err := s.rt.Remove(t.Context(), "no-such-container"); err != nil && !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("Remove: %v, want nil or ErrNotFound", err)
	}
}

func testInvalidSpec(t *testing.T, s *suite) {
	ctx, cancel := context.WithTimeout(t.Context(), s.opts.Timeout)
	defer cancel()
	noArgs := s.spec(t)
	noArgs.Args = nil
	noArgs.Image = s.opts.MissingImage
	if id, err := s.rt.Start(ctx, noArgs); !errors.Is(err, cri.ErrInvalidSpec) && !errors.Is(err, cri.ErrImageNotPresent) {
		t.Errorf("Start without args and a missing image = %q, %v; want ErrInvalidSpec or ErrImageNotPresent", id, err)
	} else if err.Error() == "" {
		t.Error("empty error message")
	}
	noName := s.spec(t, "exit", "0")
	noName.Name = ""
	if _, err := s.rt.Start(ctx, noName); !errors.Is(err, cri.ErrInvalidSpec) {
		t.Errorf("Start without a container name: %v, want ErrInvalidSpec", err)
	}
	noLog := s.spec(t, "exit", "0")
	noLog.LogPath = ""
	if _, err := s.rt.Start(ctx, noLog); !errors.Is(err, cri.ErrInvalidSpec) {
		t.Errorf("Start without a log path: %v, want ErrInvalidSpec", err)
	}
}

func testRemove(t *testing.T, s *suite) {
	spec := s.spec(t, "exit", "0")
	id, err := s.rt.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s.wait(t, id)
	if err := s.rt.Remove(t.Context(), id); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := s.rt.Status(t.Context(), id); !errors.Is(err, cri.ErrNotFound) {
		t.Errorf("Status after Remove: %v, want ErrNotFound", err)
	}
	// A new attempt of the same container gets a new ID.
	spec.Attempt = 1
	id2 := s.start(t, spec)
	if id2 == id {
		t.Errorf("attempt 1 reused ID %s", id)
	}
	s.wait(t, id2)
}

func testConcurrent(t *testing.T, s *suite) {
	const n = 8
	var wg sync.WaitGroup
	ids := make([]string, n)
	specs := make([]cri.ContainerSpec, n)
	for i := range n {
		specs[i] = s.spec(t, "out", fmt.Sprintf("c%d", i), "exit", fmt.Sprint(i))
	}
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = s.rt.Start(t.Context(), specs[i])
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Start %d: %v", i, errs[i])
		}
		id := ids[i]
		t.Cleanup(func() { _ = s.rt.Remove(context.WithoutCancel(t.Context()), id) })
	}
	for i := range n {
		if st := s.wait(t, ids[i]); st.ExitCode != i {
			t.Errorf("container %d exit code %d", i, st.ExitCode)
		}
		s.waitLog(t, specs[i].LogPath, "stdout", fmt.Sprintf("c%d", i))
	}
}
