package containerd_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

// TestExecStream runs interactive commands in a container: stdin to its end,
// separate stdout and stderr, the exit code, and a terminal sized by the
// client.
func TestExecStream(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-exec", "")
	id, err := rt.Start(t.Context(), cri.ContainerSpec{
		PodUID: "0d8f3a52-3c55-4a0e-9d0c-0c1f4c7b2e01", PodNamespace: "default", PodName: "exec", Name: "main",
		Image: "converge-exec", Args: []string{"/bin/testbin", "serve"},
		LogPath: filepath.Join(t.TempDir(), "0.log"),
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), id) })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	var out, errOut bytes.Buffer
	code, err := rt.ExecStream(ctx, id, []string{"/bin/testbin", "stdin"},
		cri.Streams{Stdin: strings.NewReader("line one\nline two\n"), Stdout: &out, Stderr: &errOut})
	if err != nil || code != 0 || out.String() != "line one\nline two\n" {
		t.Errorf("stdin: %d %q %v", code, out.String(), err)
	}

	out.Reset()
	code, err = rt.ExecStream(ctx, id, []string{"/bin/testbin", "stderr", "oops"}, cri.Streams{Stdout: &out, Stderr: &errOut})
	if err != nil || code != 0 || out.Len() != 0 || errOut.String() != "oops\n" {
		t.Errorf("stderr: %d %q %q %v", code, out.String(), errOut.String(), err)
	}

	code, err = rt.ExecStream(ctx, id, []string{"/bin/testbin", "exit", "7"}, cri.Streams{Stdout: &out})
	if err != nil || code != 7 {
		t.Errorf("exit: %d %v, want 7", code, err)
	}

	out.Reset()
	sizes := make(chan cri.TermSize, 1)
	sizes <- cri.TermSize{Width: 91, Height: 33}
	code, err = rt.ExecStream(ctx, id, []string{"/bin/testbin", "tty"}, cri.Streams{Stdout: &out, TTY: true, Resize: sizes})
	if err != nil || code != 0 || !strings.Contains(out.String(), "tty 33 91") {
		t.Errorf("tty: %d %q %v", code, out.String(), err)
	}

	if _, err := rt.ExecStream(ctx, id, []string{"/no/such/binary"}, cri.Streams{Stdout: &out}); err == nil {
		t.Error("a missing binary ran")
	}
}

// TestAttachStdin feeds the stdin of a container started with Stdin and
// StdinOnce: its input ends the container's loop.
func TestAttachStdin(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-attach", "")
	log := filepath.Join(t.TempDir(), "0.log")
	id, err := rt.Start(t.Context(), cri.ContainerSpec{
		PodUID: "0d8f3a52-3c55-4a0e-9d0c-0c1f4c7b2e02", PodNamespace: "default", PodName: "attach", Name: "main",
		Image: "converge-attach", Args: []string{"/bin/testbin", "stdin"}, LogPath: log, Stdin: true, StdinOnce: true,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), id) })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := rt.AttachStdin(ctx, id, strings.NewReader("typed line\n")); err != nil {
		t.Fatal(err)
	}
	st, err := rt.Wait(ctx, id)
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("after stdin ended: %+v %v, want exit 0", st, err)
	}
	if got := logText(runtimetest.ReadLog(t, log)); len(got) != 1 || got[0] != "stdout typed line" {
		t.Errorf("log %q", got)
	}
	if err := rt.AttachStdin(ctx, id, strings.NewReader("late\n")); err == nil {
		t.Error("attached to an exited container")
	}
}
