package process_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

func TestConformanceWithStateDir(t *testing.T) {
	helper := runtimetest.BuildHelper(t)
	rt := process.New(process.Options{StateDir: t.TempDir()})
	runtimetest.RunConformance(t, func(*testing.T) cri.Runtime { return rt }, runtimetest.Options{
		Helper: helper, HostPIDs: true, EnforcesReadOnlyMounts: rt.Namespaces(), EnforcesReadOnlyRootfs: rt.Namespaces(),
	})
}

// TestAdoption starts containers with one runtime and checks that a second
// runtime on the same StateDir (the agent restarted) adopts the live one —
// same PID, output still captured, stoppable — and reports the dead one as
// exited with its recorded status.
func TestAdoption(t *testing.T) {
	helper := runtimetest.BuildHelper(t)
	ctx := t.Context()
	state, logs := t.TempDir(), t.TempDir()
	first := process.New(process.Options{StateDir: state})
	spec := func(name string, script ...string) cri.ContainerSpec {
		return cri.ContainerSpec{PodUID: "uid-1", PodNamespace: "default", PodName: "p", Name: name, Image: "local/helper:1",
			Args: append([]string{helper}, script...), LogPath: filepath.Join(logs, name+".log"), PodIP: "127.0.0.1", Attempt: 2}
	}
	live, err := first.Start(ctx, spec("live", "out", "before", "sleep", "1s", "out", "after", "sleep", "forever"))
	if err != nil {
		t.Fatal(err)
	}
	done, err := first.Start(ctx, spec("done", "exit", "3"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := first.Wait(ctx, done); err != nil || st.ExitCode != 3 {
		t.Fatalf("wait done: %+v %v", st, err)
	}
	st1, err := first.Status(ctx, live)
	if err != nil {
		t.Fatal(err)
	}

	second := process.New(process.Options{StateDir: state})
	list, err := second.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("adopted %d containers, want 2: %+v", len(list), list)
	}
	byName := map[string]cri.ContainerInfo{}
	for _, c := range list {
		byName[c.Spec.Name] = c
	}
	l := byName["live"]
	if l.Status.ID != live || l.Status.State != cri.StateRunning || l.Status.PID != st1.PID || l.Spec.PodUID != "uid-1" || l.Spec.Attempt != 2 {
		t.Fatalf("live container adopted as %+v, want running %s with PID %d", l, live, st1.PID)
	}
	if d := byName["done"]; d.Status.State != cri.StateExited || d.Status.ExitCode != 3 || d.Status.Reason != "Error" {
		t.Fatalf("exited container adopted as %+v, want exit code 3", d)
	}
	// The first runtime must not compete for the output: it stands for a dead agent.
	// Its reader goroutines hold the pipes, so only check that output after
	// adoption still reaches the log file through one of them.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(logs, "live.log"))
		if strings.Contains(string(b), "after") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log has no 'after' line: %q", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, _, err := second.Exec(ctx, live, []string{"/bin/true"}); err != nil {
		t.Fatalf("exec in adopted container: %v", err)
	}
	if err := second.Stop(ctx, live, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	st, err := second.Wait(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != cri.StateExited || (st.ExitCode != 143 && st.ExitCode != 137) {
		t.Fatalf("stopped adopted container: %+v", st)
	}
	if err := syscall.Kill(st1.PID, 0); err == nil {
		t.Fatalf("process %d still exists", st1.PID)
	}
	for _, id := range []string{live, done} {
		if err := second.Remove(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	third := process.New(process.Options{StateDir: state})
	if list, _ := third.List(context.Background()); len(list) != 0 {
		t.Fatalf("removed containers are adopted again: %+v", list)
	}
}

// TestAdoptionOfDeadContainer: a container that died while no runtime watched
// it is reported exited with ContainerStatusUnknown.
func TestAdoptionOfDeadContainer(t *testing.T) {
	helper := runtimetest.BuildHelper(t)
	ctx := t.Context()
	state := t.TempDir()
	first := process.New(process.Options{StateDir: state})
	id, err := first.Start(ctx, cri.ContainerSpec{PodUID: "u", Name: "c", Args: []string{helper, "sleep", "forever"}, LogPath: filepath.Join(t.TempDir(), "c.log")})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := first.Status(ctx, id)
	// Simulate the agent dying before it saw the exit: hide the record while
	// the first runtime reaps the process, then put it back.
	rec := filepath.Join(state, id+".json")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Wait(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, b, 0o600); err != nil {
		t.Fatal(err)
	}
	second := process.New(process.Options{StateDir: state})
	got, err := second.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != cri.StateExited || got.ExitCode != 137 || got.Reason != cri.ReasonStatusUnknown {
		t.Fatalf("dead container adopted as %+v", got)
	}
}
