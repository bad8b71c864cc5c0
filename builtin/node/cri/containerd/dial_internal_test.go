package containerd

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listen serves a unix socket at path (a stand-in for containerd: the dialer
// only connects) until the test ends.
func listen(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// The listener is bound through the directory too: the path may be too
	// long for a sockaddr.
	dir, err := os.OpenFile(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	l, err := net.Listen("unix", filepath.Join("/proc/self/fd", strconv.Itoa(int(dir.Fd())), filepath.Base(path)))
	if err != nil {
		t.Fatalf("listen on %s: %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func newTestDialer(t *testing.T, address string) *socketDialer {
	t.Helper()
	d, err := newSocketDialer(address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func dialOnce(t *testing.T, d *socketDialer) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := d.dial(ctx, "ignored")
	if err == nil {
		c.Close()
	}
	return err
}

// inHiddenMountNamespace runs fn on a thread whose mount namespace has an
// empty tmpfs over dir, as a thread that entered a pod's mount namespace sees
// the host; the thread ends with fn.
func inHiddenMountNamespace(t *testing.T, dir string, fn func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
			errc <- err
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			errc <- err
			return
		}
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, ""); err != nil {
			errc <- err
			return
		}
		if _, err := os.Stat(filepath.Join(dir, "containerd.sock")); !errors.Is(err, os.ErrNotExist) {
			errc <- errors.New("the socket is still visible in the thread's mount namespace")
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// The containerd client used to fail every call with "dial …: timeout" when
// its socket path did not resolve for the dialing goroutine (containerd's
// dialer retries ENOENT for the whole connection timeout). These are the ways
// a path stops resolving while containerd is up; the dialer reaches it in all.
func TestSocketDialerReachesTheSocket(t *testing.T) {
	t.Run("path longer than a sockaddr holds", func(t *testing.T) {
		long := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60), "containerd.sock")
		listen(t, long)
		if err := dialOnce(t, newTestDialer(t, long)); err != nil {
			t.Fatalf("dial %d-byte path: %v", len(long), err)
		}
	})
	t.Run("relative address, working directory changed", func(t *testing.T) {
		dir := t.TempDir()
		listen(t, filepath.Join(dir, "run", "containerd.sock"))
		t.Chdir(dir)
		d := newTestDialer(t, "run/containerd.sock")
		t.Chdir(t.TempDir())
		if err := dialOnce(t, d); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("dialing thread in another mount namespace", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "run")
		listen(t, filepath.Join(dir, "containerd.sock"))
		d := newTestDialer(t, filepath.Join(dir, "containerd.sock"))
		if err := inHiddenMountNamespace(t, dir, func() error { return dialOnce(t, d) }); err != nil {
			t.Fatal(err)
		}
	})
}

// A socket that is really missing is reported within about a second with
// its path, the reason and, when they differ, the dialing thread's
// namespaces, not as a bare timeout.
func TestSocketDialerReportsAMissingSocket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "containerd.sock")
	d := newTestDialer(t, sock)
	start := time.Now()
	err := dialOnce(t, d)
	if err == nil || !errors.Is(err, unix.ENOENT) || !strings.Contains(err.Error(), sock) {
		t.Fatalf("dial a missing socket: %v; want ENOENT naming %s", err, sock)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("dial a missing socket took %v", took)
	}
	err = inHiddenMountNamespace(t, t.TempDir(), func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return err
		}
		return dialOnce(t, d)
	})
	if err == nil || !strings.Contains(err.Error(), "dialing thread") || !strings.Contains(err.Error(), "net:[") {
		t.Fatalf("dial from a thread in other namespaces: %v; want the thread's namespaces named", err)
	}
}
