package process_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
)

func TestIsPauseImage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		image string
		want  bool
	}{
		{"registry.k8s.io/pause:3.10", true},
		{"registry.k8s.io/pause", true},
		{"k8s.gcr.io/pause:3.2", true},
		{"gcr.io/google_containers/pause-amd64:3.1", true},
		{"localhost:5000/mirror/pause@sha256:0123", true},
		{"pause", true},
		{"registry.k8s.io/e2e-test-images/agnhost:2.53", false},
		{"example.com/pauser:1", false},
		{"pause.example.com/app:1", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := process.IsPauseImage(tt.image); got != tt.want {
			t.Errorf("IsPauseImage(%q) = %v, want %v", tt.image, got, tt.want)
		}
	}
}

// TestPauseContainer: a pause container with no command runs, only waits, and
// exits 0 as soon as it is asked to stop (SIGTERM), with and without PID
// namespaces (where it is PID 1 and an unhandled SIGTERM would be ignored).
func TestPauseContainer(t *testing.T) {
	for _, noNS := range []bool{false, true} {
		rt := process.New(process.Options{NoNamespaces: noNS})
		for _, args := range [][]string{nil, {"/pause"}} {
			dir := t.TempDir()
			spec := cri.ContainerSpec{PodUID: "u", PodNamespace: "ns", PodName: "p", Name: "pause",
				Image: "registry.k8s.io/pause:3.10", Args: args, LogPath: filepath.Join(dir, "pause.log")}
			id, err := rt.Start(t.Context(), spec)
			if err != nil {
				t.Fatalf("namespaces=%v args=%q: start: %v", rt.Namespaces(), args, err)
			}
			time.Sleep(300 * time.Millisecond)
			st, err := rt.Status(t.Context(), id)
			if err != nil || st.State != cri.StateRunning || st.PID == 0 {
				t.Fatalf("namespaces=%v: status %+v, %v; want running", rt.Namespaces(), st, err)
			}
			// It is this binary, waiting.
			exe, _ := os.Readlink("/proc/self/exe")
			if got, _ := os.Readlink("/proc/" + strconv.Itoa(st.PID) + "/exe"); got != exe {
				t.Errorf("pause process runs %q, want %q", got, exe)
			}
			t0 := time.Now()
			if err := rt.Stop(t.Context(), id, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			st, err = rt.Wait(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != cri.StateExited || st.ExitCode != 0 {
				t.Errorf("namespaces=%v: after stop %+v, want exited 0", rt.Namespaces(), st)
			}
			if took := time.Since(t0); took > 2*time.Second {
				t.Errorf("namespaces=%v: stopping took %s: SIGTERM was not honoured", rt.Namespaces(), took)
			}
			if log, _ := os.ReadFile(spec.LogPath); strings.TrimSpace(string(log)) != "" {
				t.Errorf("pause wrote output: %q", log)
			}
			if err := rt.Remove(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// SIGINT ends it cleanly too.
	rt := process.New(process.Options{NoNamespaces: true})
	id, err := rt.Start(t.Context(), cri.ContainerSpec{PodUID: "u", PodNamespace: "ns", PodName: "p", Name: "pause",
		Image: "registry.k8s.io/pause:3.10", LogPath: filepath.Join(t.TempDir(), "pause.log")})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	st, _ := rt.Status(t.Context(), id)
	if err := syscall.Kill(st.PID, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if st, err = rt.Wait(t.Context(), id); err != nil || st.ExitCode != 0 {
		t.Errorf("after SIGINT: %+v, %v; want exit 0", st, err)
	}
	_ = rt.Remove(t.Context(), id)
}
