package podnet

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// threadNS is the namespace of kind ("net", "mnt") of the calling thread.
func threadNS(t *testing.T, kind string) string {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ns, err := os.Readlink("/proc/thread-self/ns/" + kind)
	if err != nil {
		t.Fatalf("read the thread's %s namespace: %v", kind, err)
	}
	return ns
}

// threadsOutside returns the threads of this process whose namespace of
// kind is not want. The main thread counts too: when a goroutine locked to it
// exits, Go parks the thread for good instead of ending it, so a namespace it
// entered would live as long as the process.
func threadsOutside(t *testing.T, kind, want string) []string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		got, err := os.Readlink(filepath.Join(task, "ns", kind))
		if err == nil && got != want {
			out = append(out, fmt.Sprintf("thread %s in %s", filepath.Base(task), got))
		}
	}
	return out
}

// TestCreateNetNSLeavesNoThreadInside creates namespaces concurrently, as a
// burst of pod starts does, and checks that no thread of the process stays in
// one: a thread returned to the pool inside a pod's namespace would make
// later work of any goroutine (a dial, a listen) happen in that pod.
func TestCreateNetNSLeavesNoThreadInside(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{"net": threadNS(t, "net"), "mnt": threadNS(t, "mnt")}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			p := filepath.Join(dir, fmt.Sprint(i))
			if err := createNetNS(p); err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { _ = removeNetNS(p) })
		})
	}
	wg.Wait()
	// A thread that unshared exits right after its goroutine answers: give
	// the exits a moment.
	for _, kind := range []string{"net", "mnt"} {
		var out []string
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if out = threadsOutside(t, kind, want[kind]); len(out) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(out) > 0 {
			t.Errorf("threads left outside the process's %s namespace: %v", kind, out)
		}
	}
}
