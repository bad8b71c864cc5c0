package daemon_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
)

func TestStartStop(t *testing.T) {
	dir, err := os.MkdirTemp("", "cvg-ctd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	t0 := time.Now()
	d, err := daemon.Start(ctx, daemon.Options{Dir: dir})
	if err != nil {
		t.Fatalf("Start: %v", err) // also when containerd is not installed: CI must install it
	}
	t.Logf("containerd ready in %v", time.Since(t0))
	if d.Address() != filepath.Join(dir, "containerd.sock") || d.PID() <= 0 {
		t.Errorf("Address %q PID %d", d.Address(), d.PID())
	}
	conn, err := net.Dial("unix", d.Address())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	conn.Close()
	cfg, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	if err != nil || !strings.Contains(string(cfg), `"io.containerd.grpc.v1.cri"`) {
		t.Errorf("config: %v\n%s", err, cfg)
	}

	cancel()
	select {
	case <-d.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("containerd did not stop after the context ended")
	}
	if err := d.Wait(); err != nil {
		t.Errorf("Wait after a requested stop: %v", err)
	}

	// The same dir serves a second daemon (stale sockets are removed).
	ctx2, cancel2 := context.WithCancel(t.Context())
	d2, err := daemon.Start(ctx2, daemon.Options{Dir: dir})
	if err != nil {
		cancel2()
		t.Fatalf("restart in the same dir: %v", err)
	}
	cancel2()
	if err := d2.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Parallel()
	_, err := daemon.Start(t.Context(), daemon.Options{Dir: t.TempDir(), Binary: "/nonexistent/containerd"})
	if !errors.Is(err, daemon.ErrNotInstalled) {
		t.Fatalf("Start with a missing binary = %v, want ErrNotInstalled", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y containerd runc") {
		t.Errorf("error %q does not say how to install containerd", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	for _, o := range []daemon.Options{
		{},
		{Dir: "relative/dir"},
		{Dir: "/" + strings.Repeat("d", 100)},
		{Dir: "/tmp/x", StartTimeout: -1},
	} {
		if _, err := daemon.Start(t.Context(), o); err == nil || errors.Is(err, daemon.ErrNotInstalled) {
			t.Errorf("Start(%+v) = %v, want a validation error", o, err)
		}
	}
}

func TestStartFailureShowsLog(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "cvg-ctd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	fake := filepath.Join(dir, "fake-containerd")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'boom: cannot start' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = daemon.Start(t.Context(), daemon.Options{Dir: dir, Binary: fake})
	if err == nil || !strings.Contains(err.Error(), "boom: cannot start") || !strings.Contains(err.Error(), "exited during start-up") {
		t.Fatalf("Start of a daemon that exits = %v, want the exit and the log's tail", err)
	}
}

// The daemon outlives the thread that started it. Go ends a thread whose
// locked goroutine exits (pod network setup does so for every pod), and a
// parent-death signal set at the fork fires on the forking thread's exit, not
// the process's: containerd was stopped (its socket removed) in the middle of
// a burst of pod starts, and every later call failed to dial.
func TestSurvivesTheExitOfTheStartingThread(t *testing.T) {
	dir, err := os.MkdirTemp("", "cvg-ctd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type started struct {
		d   *daemon.Daemon
		err error
	}
	res := make(chan started, 1)
	runtime.LockOSThread() // the goroutine below cannot run on this thread
	defer runtime.UnlockOSThread()
	var r started
	for {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if syscall.Gettid() == os.Getpid() {
				// Go parks the main thread instead of ending it: try another.
				runtime.UnlockOSThread()
				res <- started{}
				return
			}
			d, err := daemon.Start(ctx, daemon.Options{Dir: dir})
			res <- started{d, err}
		}()
		if r = <-res; r.d != nil || r.err != nil {
			break
		}
	}
	if r.err != nil {
		t.Fatalf("Start: %v", r.err)
	}
	defer func() { cancel(); <-r.d.Done() }()
	select {
	case <-r.d.Done():
		t.Fatalf("containerd stopped when the thread that started it ended: %v", r.d.Wait())
	case <-time.After(2 * time.Second):
	}
	conn, err := net.Dial("unix", r.d.Address())
	if err != nil {
		t.Fatalf("dial containerd after the starting thread ended: %v", err)
	}
	conn.Close()
}
