package containerd_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/containerd/v2/pkg/namespaces"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// TestBurstOfStarts: concurrent starts of an image imported but never
// unpacked all run; the creations share one lease instead of one each, and a
// removed container's snapshot goes with it.
func TestBurstOfStarts(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-burst", "")
	logs := t.TempDir()
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := rt.Start(t.Context(), cri.ContainerSpec{
				PodNamespace: "default", PodName: "p" + strconv.Itoa(i), Name: "c", Image: "converge-burst",
				Args: []string{"/bin/testbin", "exit", "0"}, LogPath: filepath.Join(logs, strconv.Itoa(i)+".log"),
			})
			if err != nil {
				t.Errorf("Start %d: %v", i, err)
				return
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" {
			continue
		}
		if st, err := rt.Wait(t.Context(), id); err != nil || st.ExitCode != 0 {
			t.Errorf("Wait %s: %+v, %v", id, st, err)
		}
	}
	ctx := namespaces.WithNamespace(t.Context(), rt.Namespace())
	ls, err := rt.Client().LeasesService().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 {
		t.Errorf("%d leases after %d starts, want the one they share: %+v", len(ls), n, ls)
	}
	for _, id := range ids {
		if id != "" {
			if err := rt.Remove(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}
	}
	left := map[string]bool{}
	if err := rt.Client().SnapshotService(rt.Snapshotter()).Walk(ctx, func(_ context.Context, i snapshots.Info) error {
		left[i.Name] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if left[id] {
			t.Errorf("snapshot of removed container %s is left", id)
		}
	}
}
