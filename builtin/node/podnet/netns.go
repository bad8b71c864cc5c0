package podnet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// errMainThread says a namespace change was about to run on the main thread.
var errMainThread = errors.New("on the main thread")

// createNetNS creates a new network namespace and bind-mounts it on path.
func createNetNS(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create network namespace directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("create network namespace file: %w", err)
	}
	_ = f.Close()
	err = onOwnThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare network namespace: %w", err)
		}
		if err := loopbackUp(); err != nil {
			return err
		}
		src := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mount network namespace on %s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

// onOwnThread runs fn on an OS thread of its own that ends with it, so fn
// may change the thread's namespaces: no other goroutine ever runs there.
func onOwnThread(fn func() error) error {
	// Locked while it waits, the caller's thread (the main thread, maybe)
	// cannot run the goroutine that changes namespace.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	errCh := make(chan error, 1)
	for {
		go func() {
			// The thread is never unlocked: it exits with this goroutine.
			runtime.LockOSThread()
			if unix.Gettid() == os.Getpid() {
				// Go parks the main thread for good instead of ending it: it
				// would keep a namespace it entered alive. Another goroutine
				// (and thread) tries again.
				runtime.UnlockOSThread()
				errCh <- errMainThread
				return
			}
			errCh <- fn()
		}()
		if err := <-errCh; !errors.Is(err, errMainThread) {
			return err
		}
	}
}

// loopbackUp brings lo up in the calling thread's network namespace (the
// kernel gives it 127.0.0.1/8 and ::1): what the loopback CNI plugin does,
// without running a plugin per pod.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring lo up: socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: read flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// isNetNS reports whether path is a mounted network namespace.
func isNetNS(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Type == unix.NSFS_MAGIC
}

// removeNetNS unmounts and removes path; a missing path is not an error.
func removeNetNS(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount network namespace %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", path, err)
	}
	return nil
}
