package process_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
)

// TestContainerStats measures a CPU-burning container (its shell and a
// child burning too) and an idle one with a memory limit. It is not
// parallel: its burners would slow the timing-sensitive tests beside it.
func TestContainerStats(t *testing.T) {
	ctx := t.Context()
	rt := process.New(process.Options{})
	start := func(name string, res cri.Resources, args ...string) string {
		t.Helper()
		id, err := rt.Start(ctx, cri.ContainerSpec{PodNamespace: "ns", PodName: "p", Name: name, Args: args,
			LogPath: filepath.Join(t.TempDir(), name+".log"), Resources: res})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = rt.Stop(context.WithoutCancel(ctx), id, 0)
			_ = rt.Remove(context.WithoutCancel(ctx), id)
		})
		return id
	}
	burner := start("burn", cri.Resources{}, "sh", "-c", "(while :; do :; done) & while :; do :; done")
	idle := start("idle", cri.Resources{MemoryBytes: 64 << 20}, "sleep", "60")

	first, err := rt.ContainerStats(ctx, burner)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	second, err := rt.ContainerStats(ctx, burner)
	if err != nil {
		t.Fatal(err)
	}
	used := time.Duration(second.CPUUsageNanos - first.CPUUsageNanos)
	wall := second.Timestamp.Sub(first.Timestamp)
	// Two busy processes on a shared 2-core machine: well above one tenth
	// of a core, at most the two cores.
	if used < wall/10 || used > 2*wall+20*time.Millisecond {
		t.Errorf("burner used %v of CPU in %v", used, wall)
	}
	if second.MemoryWorkingSetBytes == 0 {
		t.Error("burner has no working set")
	}

	st, err := rt.ContainerStats(ctx, idle)
	if err != nil {
		t.Fatal(err)
	}
	if st.MemoryWorkingSetBytes == 0 || st.MemoryWorkingSetBytes > 64<<20 {
		t.Errorf("idle working set = %d bytes", st.MemoryWorkingSetBytes)
	}
	if _, err := rt.ContainerStats(ctx, "nope"); err == nil {
		t.Error("unknown container: no error")
	}
}
