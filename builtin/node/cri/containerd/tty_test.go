package containerd_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

// TestAttachTTYAndTarget runs a container on the shim's terminal and
// attaches to it (output, typed input, resizes; the container outlives the
// session), then an ephemeral-style container in its PID namespace
// (TargetID).
func TestAttachTTYAndTarget(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-tty", "")
	log := filepath.Join(t.TempDir(), "0.log")
	id, err := rt.Start(t.Context(), cri.ContainerSpec{
		PodUID: "0d8f3a52-3c55-4a0e-9d0c-0c1f4c7b2e03", PodNamespace: "default", PodName: "tty", Name: "main",
		Image: "converge-tty", Args: []string{"/bin/testbin", "ttylines"}, LogPath: log, Stdin: true, TTY: true,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), id) })
	if !rt.HasTTY(id) {
		t.Fatal("HasTTY = false for a TTY container")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	var out runtimetest.Buffer
	sizes := make(chan cri.TermSize, 1)
	sizes <- cri.TermSize{Width: 83, Height: 27}
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- rt.AttachTTY(ctx, id, cri.Streams{Stdin: inR, Stdout: &out, TTY: true, Resize: sizes}) }()
	runtimetest.WaitFor(t, "the answer on the resized terminal", func() bool {
		go func() { _, _ = io.WriteString(inW, "hello\n") }()
		return strings.Contains(out.String(), "got hello 27 83")
	})
	inW.Close() // the client detaches
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("AttachTTY = %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the session did not end with its input")
	}
	if st, err := rt.Status(ctx, id); err != nil || st.State != cri.StateRunning {
		t.Fatalf("after detaching: %+v %v, want it running", st, err)
	}
	if got := logText(runtimetest.ReadLog(t, log)); !strings.Contains(strings.Join(got, "\n"), "stdout got hello 27 83") {
		t.Errorf("log %q: want the terminal's output as stdout", got)
	}

	var mainNS strings.Builder
	if _, err := rt.ExecStream(ctx, id, []string{"/bin/testbin", "pidns"}, cri.Streams{Stdout: &mainNS}); err != nil {
		t.Fatal(err)
	}
	dlog := filepath.Join(t.TempDir(), "0.log")
	dbg, err := rt.Start(t.Context(), cri.ContainerSpec{
		PodUID: "0d8f3a52-3c55-4a0e-9d0c-0c1f4c7b2e03", PodNamespace: "default", PodName: "tty", Name: "debugger",
		Image: "converge-tty", Args: []string{"/bin/testbin", "pidns"}, LogPath: dlog, TargetID: id,
	})
	if err != nil {
		t.Fatalf("Start with TargetID: %v", err)
	}
	t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), dbg) })
	if st, err := rt.Wait(ctx, dbg); err != nil || st.ExitCode != 0 {
		t.Fatalf("debugger: %+v %v", st, err)
	}
	want := "stdout " + strings.TrimSpace(mainNS.String())
	if got := logText(runtimetest.ReadLog(t, dlog)); len(got) != 1 || got[0] != want {
		t.Errorf("debugger's PID namespace %q, want the target's %q", got, want)
	}
}
