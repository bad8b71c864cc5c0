package process_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

// TestAttachTTY attaches sessions to a container on a terminal: its output
// from then on, typed input, resizes; the container outlives a session whose
// input ended, and with StdinOnce the first session's end is end-of-file.
// The output is logged as stdout.
func TestAttachTTY(t *testing.T) {
	for _, once := range []bool{false, true} {
		t.Run(map[bool]string{false: "stdin", true: "stdinOnce"}[once], func(t *testing.T) {
			rt := process.New(process.Options{})
			logPath := filepath.Join(t.TempDir(), "0.log")
			id, err := rt.Start(t.Context(), cri.ContainerSpec{PodUID: "u", PodNamespace: "ns", PodName: "p", Name: "c",
				Args: []string{"sh", "-c", "while read l; do echo got $l; stty size; done; echo eof; sleep 30"},
				Env:  []string{"PATH=/usr/bin:/bin"}, LogPath: logPath, TTY: true, Stdin: true, StdinOnce: once})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rt.Remove(context.WithoutCancel(t.Context()), id) })
			if !rt.HasTTY(id) {
				t.Fatal("HasTTY = false for a tty: true container")
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()

			var out runtimetest.Buffer
			sizes := make(chan cri.TermSize, 1)
			sizes <- cri.TermSize{Width: 83, Height: 27}
			inR, inW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- rt.AttachTTY(ctx, id, cri.Streams{Stdin: inR, Stdout: &out, TTY: true, Resize: sizes}) }()
			runtimetest.WaitFor(t, "the resize", func() bool {
				_, _ = io.WriteString(inW, "hello\n")
				return strings.Contains(out.String(), "27 83")
			})
			if !strings.Contains(out.String(), "got hello") {
				t.Errorf("session output %q: want got hello", out.String())
			}
			inW.Close() // the client detaches
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("AttachTTY = %v", err)
				}
			case <-ctx.Done():
				t.Fatal("the session did not end with its input")
			}
			st, err := rt.Status(ctx, id)
			if err != nil || st.State != cri.StateRunning {
				t.Fatalf("after detaching: %+v %v, want it running", st, err)
			}
			if once {
				runtimetest.WaitFor(t, "end-of-file in the log", func() bool { b, _ := os.ReadFile(logPath); return strings.Contains(string(b), "stdout F eof") })
				err := rt.AttachTTY(ctx, id, cri.Streams{Stdin: strings.NewReader("again\n"), Stdout: io.Discard, TTY: true})
				if err == nil {
					t.Error("a second session with input was accepted after StdinOnce closed it")
				}
				return
			}
			// Another session still types into the same terminal.
			var out2 runtimetest.Buffer
			ctx2, cancel2 := context.WithCancel(ctx)
			defer cancel2()
			in2R, in2W := io.Pipe()
			defer in2W.Close()
			go func() { _ = rt.AttachTTY(ctx2, id, cri.Streams{Stdin: in2R, Stdout: &out2, TTY: true}) }()
			runtimetest.WaitFor(t, "the second session's answer", func() bool {
				_, _ = io.WriteString(in2W, "again\n")
				return strings.Contains(out2.String(), "got again")
			})
			b, _ := os.ReadFile(logPath)
			if !strings.Contains(string(b), "stdout F got hello") {
				t.Errorf("log %q: want the terminal's output as stdout", b)
			}
		})
	}
}
