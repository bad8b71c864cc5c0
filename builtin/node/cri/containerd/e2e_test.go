package containerd_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

const testPkg = "github.com/converge-dev/converge/builtin/node/cri/containerd/testdata/testbin"

// TestEndToEnd builds an image from a static binary, imports it, runs a pod's
// container twice (attempts 0 and 1), reads its logs and exit codes, execs into
// a running one, checks its cgroup limits, stops it with a grace period, and
// sees an OOM kill.
func TestEndToEnd(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	names := importBinary(t, rt, bin, "converge-e2e", "")
	if want := []string{"docker.io/library/converge-e2e:latest"}; !slices.Equal(names, want) {
		t.Fatalf("imported %q, want %q", names, want)
	}
	logs := t.TempDir()
	spec := func(attempt int, args ...string) cri.ContainerSpec {
		return cri.ContainerSpec{
			PodUID: "6c0e8f4e-7d0b-4a43-9d59-2f4b3c1f0a11", PodNamespace: "default", PodName: "e2e", Name: "main",
			Image:   "converge-e2e", // short name: resolved like Kubernetes does
			Args:    append([]string{"/bin/testbin"}, args...),
			LogPath: filepath.Join(logs, "main", strconv.Itoa(attempt)+".log"),
			Attempt: attempt,
		}
	}
	wait := func(id string) cri.ContainerStatus {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		st, err := rt.Wait(ctx, id)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		return st
	}

	// Attempt 0: output on both streams, exit code 3.
	first := spec(0, "greet")
	id0, err := rt.Start(t.Context(), first)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	st := wait(id0)
	if st.State != cri.StateExited || st.ExitCode != 3 || st.Reason != "Error" {
		t.Errorf("attempt 0 status = %+v, want Exited 3 Error", st)
	}
	lines := runtimetest.ReadLog(t, first.LogPath)
	if got, want := logText(lines), []string{"stdout out: hello", "stderr err: oops"}; !sameSet(got, want) {
		t.Errorf("attempt 0 log = %q, want %q", got, want)
	}

	// Attempt 1 (the agent restarts the container): a new container and log.
	second := spec(1, "echo", "again")
	id1, err := rt.Start(t.Context(), second)
	if err != nil {
		t.Fatalf("Start attempt 1: %v", err)
	}
	if id1 == id0 {
		t.Fatal("attempt 1 reused the container ID")
	}
	if st := wait(id1); st.ExitCode != 0 || st.Reason != "Completed" {
		t.Errorf("attempt 1 status = %+v, want 0 Completed", st)
	}
	if got := logText(runtimetest.ReadLog(t, second.LogPath)); !slices.Equal(got, []string{"stdout again"}) {
		t.Errorf("attempt 1 log = %q", got)
	}
	// The first attempt's status survives until Remove.
	if st, err := rt.Status(t.Context(), id0); err != nil || st.ExitCode != 3 {
		t.Errorf("attempt 0 status after attempt 1 = %+v, %v", st, err)
	}
	for _, id := range []string{id0, id1} {
		if err := rt.Remove(t.Context(), id); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if _, err := rt.Status(t.Context(), id); !errors.Is(err, cri.ErrNotFound) {
			t.Errorf("Status after Remove = %v, want ErrNotFound", err)
		}
	}

	// A long-running container with limits, env, user, a mount; exec; stop.
	vol := t.TempDir()
	if err := os.WriteFile(filepath.Join(vol, "config"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid, gid := int64(1234), int64(5678)
	svc := spec(0, "serve")
	svc.Name = "svc"
	svc.LogPath = filepath.Join(logs, "svc", "0.log")
	svc.Env = []string{"GREETING=hi there"}
	svc.Mounts = []cri.Mount{{HostPath: vol, ContainerPath: "/etc/app", ReadOnly: true}}
	svc.RunAsUser, svc.RunAsGroup = &uid, &gid
	svc.Resources = cri.Resources{MemoryBytes: 64 << 20, CPUMilli: 250}
	id, err := rt.Start(t.Context(), svc)
	if err != nil {
		t.Fatalf("Start svc: %v", err)
	}
	st, err = rt.Status(t.Context(), id)
	if err != nil || st.State != cri.StateRunning || st.PID <= 0 {
		t.Fatalf("svc status = %+v, %v", st, err)
	}
	cg := "/converge/" + id
	if got := readTrim(t, "/sys/fs/cgroup/memory"+cg+"/memory.limit_in_bytes"); got != strconv.Itoa(64<<20) {
		t.Errorf("memory.limit_in_bytes = %s, want %d", got, 64<<20)
	}
	if got := readTrim(t, "/sys/fs/cgroup/cpu"+cg+"/cpu.cfs_quota_us"); got != "25000" {
		t.Errorf("cpu.cfs_quota_us = %s, want 25000", got)
	}
	if procs := readTrim(t, "/sys/fs/cgroup/memory"+cg+"/cgroup.procs"); !slices.Contains(strings.Fields(procs), strconv.Itoa(st.PID)) {
		t.Errorf("PID %d not in the container's memory cgroup (%q)", st.PID, procs)
	}
	for _, c := range []struct {
		cmd  []string
		code int
		out  string
	}{
		{[]string{"/bin/testbin", "id"}, 0, "uid=1234 gid=5678\n"},
		{[]string{"/bin/testbin", "cat", "/etc/app/config"}, 0, "from the host\n"},
		{[]string{"/bin/testbin", "hostname"}, 0, "e2e\n"},
		{[]string{"/bin/testbin", "stderr", "to stderr"}, 0, "to stderr\n"},
		{[]string{"/bin/testbin", "exit", "7"}, 7, ""},
	} {
		code, out, err := rt.Exec(t.Context(), id, c.cmd)
		if err != nil || code != c.code || string(out) != c.out {
			t.Errorf("Exec %q = %d %q %v, want %d %q", c.cmd, code, out, err, c.code, c.out)
		}
	}
	code, out, err := rt.Exec(t.Context(), id, []string{"/bin/testbin", "env"})
	if err != nil || code != 0 || !strings.Contains(string(out), "GREETING=hi there\n") || !strings.Contains(string(out), "PATH=") {
		t.Errorf("Exec env = %d %q %v, want GREETING and the image's PATH", code, out, err)
	}
	if _, _, err := rt.Exec(t.Context(), id, []string{"/no/such/binary"}); err == nil {
		t.Error("Exec of a missing binary succeeded")
	}
	if ms, err := rt.ContainerStats(t.Context(), id); err != nil || ms.MemoryWorkingSetBytes == 0 || ms.MemoryWorkingSetBytes > 64<<20 || ms.CPUUsageNanos == 0 {
		t.Errorf("ContainerStats of svc = %+v, %v; want task metrics (CPU used by the execs' container, working set under its limit)", ms, err)
	}
	t0 := time.Now()
	if err := rt.Stop(t.Context(), id, 10*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("graceful Stop took %v", d)
	}
	if st := wait(id); st.ExitCode != 0 || st.FinishedAt.IsZero() {
		t.Errorf("svc after SIGTERM = %+v, want exit 0", st)
	}
	if got := logText(runtimetest.ReadLog(t, svc.LogPath)); !slices.Equal(got, []string{"stdout ready", "stdout got SIGTERM"}) {
		t.Errorf("svc log = %q", got)
	}
	if _, _, err := rt.Exec(t.Context(), id, []string{"/bin/testbin", "id"}); err == nil {
		t.Error("Exec in an exited container succeeded")
	}

	// Over its memory limit, the container is OOM-killed.
	oom := spec(0, "alloc", "256")
	oom.Name, oom.LogPath = "oom", filepath.Join(logs, "oom", "0.log")
	oom.Resources.MemoryBytes = 32 << 20
	id, err = rt.Start(t.Context(), oom)
	if err != nil {
		t.Fatalf("Start oom: %v", err)
	}
	if st := wait(id); st.ExitCode != 137 || st.Reason != "OOMKilled" {
		t.Errorf("oom status = %+v, want 137 OOMKilled", st)
	}

	// Without Args, ImageArgs follow the image's entrypoint (pod args without command).
	imgArgs := spec(0)
	imgArgs.Name, imgArgs.LogPath, imgArgs.Args = "imgargs", filepath.Join(logs, "imgargs", "0.log"), nil
	imgArgs.ImageArgs = []string{"echo", "via image args"}
	id, err = rt.Start(t.Context(), imgArgs)
	if err != nil {
		t.Fatalf("Start with ImageArgs: %v", err)
	}
	if st := wait(id); st.ExitCode != 0 {
		t.Errorf("ImageArgs container exit %d", st.ExitCode)
	}
	if got := logText(runtimetest.ReadLog(t, imgArgs.LogPath)); !slices.Equal(got, []string{"stdout via image args"}) {
		t.Errorf("ImageArgs log = %q", got)
	}

	// Start never pulls (the agent pulls first through cri.ImageService).
	missing := spec(0, "echo")
	missing.Image = "example.com/not/imported:v1"
	if _, err := rt.Start(t.Context(), missing); !errors.Is(err, cri.ErrImageNotPresent) {
		t.Errorf("Start with a missing image = %v, want ErrImageNotPresent", err)
	}
}

// TestRestartedRuntime: a second Runtime on the same daemon (an agent restart)
// sees the containers, their state and exit codes, and can stop and remove them.
func TestRestartedRuntime(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-e2e", "")
	logs := t.TempDir()
	start := func(args ...string) string {
		id, err := rt.Start(t.Context(), cri.ContainerSpec{
			PodNamespace: "default", PodName: "p", Name: "c", Image: "converge-e2e",
			Args: append([]string{"/bin/testbin"}, args...), LogPath: filepath.Join(logs, args[0]+".log"),
		})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		return id
	}
	exited, running := start("exit", "9"), start("serve")
	if _, err := rt.Wait(t.Context(), exited); err != nil {
		t.Fatal(err)
	}

	rt2, err := containerd.New(t.Context(), containerd.Options{Address: rt.Address()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if st, err := rt2.Status(t.Context(), exited); err != nil || st.State != cri.StateExited || st.ExitCode != 9 || st.StartedAt.IsZero() {
		t.Errorf("exited container seen by a new runtime: %+v, %v", st, err)
	}
	if st, err := rt2.Status(t.Context(), running); err != nil || st.State != cri.StateRunning || st.PID <= 0 {
		t.Errorf("running container seen by a new runtime: %+v, %v", st, err)
	}
	if err := rt2.Stop(t.Context(), running, 5*time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if st, err := rt2.Wait(t.Context(), running); err != nil || st.ExitCode != 0 {
		t.Errorf("after Stop: %+v, %v", st, err)
	}
	for _, id := range []string{exited, running} {
		if err := rt2.Remove(t.Context(), id); err != nil {
			t.Errorf("Remove: %v", err)
		}
	}
}

func logText(lines []runtimetest.LogLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.Stream+" "+l.Text)
	}
	return out
}

// sameSet compares ignoring order (stdout and stderr are separate streams).
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read %s: %v", path, err)
	}
	return strings.TrimSpace(string(b))
}

// TestSnapshotterAndBadArgs: the native snapshotter works as overlayfs's
// fallback, and a missing executable is an invalid spec that leaves nothing behind.
func TestSnapshotterAndBadArgs(t *testing.T) {
	rt := startRuntime(t)
	if rt.Snapshotter() != containerd.DefaultSnapshotter {
		t.Logf("daemon has no overlayfs; using %s", rt.Snapshotter())
	}
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-e2e", "")
	native, err := containerd.New(t.Context(), containerd.Options{Address: rt.Address(), Snapshotter: containerd.FallbackSnapshotter})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	spec := cri.ContainerSpec{
		PodNamespace: "default", PodName: "p", Name: "c", Image: "converge-e2e",
		Args: []string{"/bin/testbin", "echo", "on native"}, LogPath: filepath.Join(t.TempDir(), "0.log"),
	}
	id, err := native.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start on native: %v", err)
	}
	if st, err := native.Wait(t.Context(), id); err != nil || st.ExitCode != 0 {
		t.Fatalf("Wait: %+v %v", st, err)
	}
	if got := logText(runtimetest.ReadLog(t, spec.LogPath)); !slices.Equal(got, []string{"stdout on native"}) {
		t.Errorf("log = %q", got)
	}
	if err := native.Remove(t.Context(), id); err != nil {
		t.Fatal(err)
	}

	spec.Args = []string{"/no/such/program"}
	if _, err := rt.Start(t.Context(), spec); !errors.Is(err, cri.ErrInvalidSpec) {
		t.Errorf("Start of a missing executable = %v, want ErrInvalidSpec", err)
	}
	conts, err := rt.Client().Containers(namespaces.WithNamespace(t.Context(), rt.Namespace()))
	if err != nil || len(conts) != 0 {
		t.Errorf("containers left after failed starts: %d, %v", len(conts), err)
	}
}

// TestImageRemovedByAnotherClient: a Runtime remembers images it found
// unpacked; an image removed by another client (converge image rm) and
// imported again starts anyway.
func TestImageRemovedByAnotherClient(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-e2e", "")
	logs := t.TempDir()
	start := func() {
		t.Helper()
		id, err := rt.Start(t.Context(), cri.ContainerSpec{
			PodNamespace: "default", PodName: "p", Name: "c", Image: "converge-e2e",
			Args: []string{"/bin/testbin", "exit", "0"}, LogPath: filepath.Join(logs, "c.log"),
		})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		if _, err := rt.Wait(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if err := rt.Remove(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	start()
	other, err := containerd.New(t.Context(), containerd.Options{Address: rt.Address()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.RemoveImage(t.Context(), "converge-e2e"); err != nil {
		t.Fatal(err)
	}
	importBinary(t, other, bin, "converge-e2e", "")
	start()
}
