package process_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
)

// TestExecStream runs interactive commands in a container with and without
// namespaces: the container's env and working dir, stdin to its end, stdout
// and stderr apart, exit codes, and a pty sized and resized by the client.
func TestExecStream(t *testing.T) {
	for _, noNS := range []bool{false, true} {
		t.Run(map[bool]string{false: "namespaces", true: "no namespaces"}[noNS], func(t *testing.T) {
			rt := process.New(process.Options{NoNamespaces: noNS})
			dir := t.TempDir()
			id, err := rt.Start(t.Context(), cri.ContainerSpec{PodUID: "u", PodNamespace: "ns", PodName: "p", Name: "c",
				Args: []string{"sleep", "30"}, Env: []string{"GREETING=hi", "PATH=/usr/bin:/bin"}, WorkingDir: dir,
				LogPath: filepath.Join(t.TempDir(), "0.log")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), id) })
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()

			var out, errOut bytes.Buffer
			code, err := rt.ExecStream(ctx, id, []string{"sh", "-c", "echo $GREETING; pwd; cat; echo oops >&2; exit 3"},
				cri.Streams{Stdin: strings.NewReader("typed\n"), Stdout: &out, Stderr: &errOut})
			if err != nil || code != 3 || out.String() != "hi\n"+dir+"\ntyped\n" || errOut.String() != "oops\n" {
				t.Errorf("exec = %d %v, stdout %q, stderr %q", code, err, out.String(), errOut.String())
			}

			out.Reset()
			sizes := make(chan cri.TermSize, 2)
			sizes <- cri.TermSize{Width: 97, Height: 31}
			stdin := strings.NewReader("stty size\nexit 5\n")
			code, err = rt.ExecStream(ctx, id, []string{"sh", "-c", "tty; stty size; exec sh"},
				cri.Streams{Stdin: stdin, Stdout: &out, TTY: true, Resize: sizes})
			if err != nil || code != 5 {
				t.Errorf("tty exec = %d %v, output %q", code, err, out.String())
			}
			if s := out.String(); !strings.Contains(s, "/dev/pts/") || !strings.Contains(s, "31 97") { // the terminal echoes the input too
				t.Errorf("tty output %q: want a pts and 31 97", s)
			}

			out.Reset()
			if _, err := rt.ExecStream(ctx, id, []string{"grep", "NSpid", "/proc/self/status"}, cri.Streams{Stdout: &out}); err != nil {
				t.Fatal(err)
			}
			// NSpid lists the PID in each namespace: two levels in the container's.
			if levels := len(strings.Fields(out.String())) - 1; rt.Namespaces() && levels != 2 || !rt.Namespaces() && levels != 1 {
				t.Errorf("exec's %q: want it in the container's PID namespace exactly when containers get one", out.String())
			}

			if _, err := rt.ExecStream(ctx, id, []string{"no-such-command-here"}, cri.Streams{Stdout: &out}); err == nil ||
				!strings.Contains(err.Error(), "no-such-command-here") {
				t.Errorf("missing command: %v", err)
			}
		})
	}
}

// TestAttachStdin feeds a container's stdin from attach sessions: kept open
// across sessions, or closed after the first with StdinOnce; refused for a
// container without stdin.
func TestAttachStdin(t *testing.T) {
	rt := process.New(process.Options{})
	logs := t.TempDir()
	start := func(name string, once bool) (string, string) {
		t.Helper()
		log := filepath.Join(logs, name+".log")
		id, err := rt.Start(t.Context(), cri.ContainerSpec{PodUID: "u", PodNamespace: "ns", PodName: "p", Name: name,
			Args: []string{"sh", "-c", "while read l; do echo got $l; done; echo bye"}, Env: []string{"PATH=/usr/bin:/bin"},
			LogPath: log, Stdin: true, StdinOnce: once})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), id) })
		return id, log
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	kept, _ := start("kept", false)
	for _, in := range []string{"one\n", "two\n"} {
		if err := rt.AttachStdin(ctx, kept, strings.NewReader(in)); err != nil {
			t.Fatalf("attach %q: %v", in, err)
		}
	}
	once, onceLog := start("once", true)
	if err := rt.AttachStdin(ctx, once, strings.NewReader("three\n")); err != nil {
		t.Fatal(err)
	}
	st, err := rt.Wait(ctx, once)
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("stdinOnce container: %+v %v, want it to end with its input", st, err)
	}
	if err := rt.AttachStdin(ctx, once, strings.NewReader("late\n")); err == nil {
		t.Error("attached to a closed stdin")
	}
	if st, _ := rt.Status(ctx, kept); st.State != cri.StateRunning {
		t.Errorf("the container with stdin kept open ended: %+v", st)
	}
	if b := readFile(t, onceLog); !strings.Contains(b, "got three") || !strings.Contains(b, "bye") {
		t.Errorf("log %q", b)
	}
	plain, err := rt.Start(t.Context(), cri.ContainerSpec{PodUID: "u", PodNamespace: "ns", PodName: "p", Name: "plain",
		Args: []string{"sleep", "30"}, LogPath: filepath.Join(logs, "plain.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), plain) })
	if err := rt.AttachStdin(ctx, plain, strings.NewReader("x\n")); err == nil {
		t.Error("attached to a container without stdin")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
