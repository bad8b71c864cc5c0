package containerd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// socketDialer connects to containerd's socket through a descriptor of its
// directory opened once by New: /proc/self/fd/<n>/<socket>. containerd's own
// dialer resolves the path on every dial and retries ENOENT until the
// connection timeout, then answers only "dial …: timeout" and every call
// fails until a later dial finds the path. Dialing through the descriptor
// makes the dial independent of the working directory (a relative address),
// of the path's length (a unix socket address holds 108 bytes) and of the
// mount namespace of the thread that happens to run the dial. A dial that
// fails says why, with the thread's namespaces when they are not the ones New
// ran in.
type socketDialer struct {
	path string   // absolute socket path, for messages and the fallback
	dir  *os.File // O_PATH descriptor of the socket's directory
	via  string   // /proc/self/fd/<n>/<base>
	// netNS and mntNS are the namespaces of the thread that ran New.
	netNS, mntNS string
}

// enoentRetry bounds how long a dial waits for a missing socket (a
// restarting daemon): short, so a persistent ENOENT is reported, not hidden
// behind a timeout.
const enoentRetry = time.Second

func newSocketDialer(address string) (*socketDialer, error) {
	p, err := filepath.Abs(strings.TrimPrefix(address, "unix://"))
	if err != nil {
		return nil, fmt.Errorf("resolve containerd address %q: %w", address, err)
	}
	dir, err := os.OpenFile(filepath.Dir(p), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the directory of containerd's socket %s: %w", p, err)
	}
	d := &socketDialer{path: p, dir: dir, via: fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(p))}
	runtime.LockOSThread()
	d.netNS, d.mntNS = threadNamespaces()
	runtime.UnlockOSThread()
	return d, nil
}

// Close closes the directory descriptor.
func (d *socketDialer) Close() error { return d.dir.Close() }

// dial is a grpc context dialer; the address grpc passes is ignored.
func (d *socketDialer) dial(ctx context.Context, _ string) (net.Conn, error) {
	// Locked, so that a failure reports the namespaces of the thread that
	// dialed.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var nd net.Dialer
	deadline := time.Now().Add(enoentRetry)
	for {
		c, err := nd.DialContext(ctx, "unix", d.via)
		if errors.Is(err, unix.ENOENT) && len(d.path) < len(unix.RawSockaddrUnix{}.Path) {
			// The directory itself was replaced: the path may lead to the new one.
			c, err = nd.DialContext(ctx, "unix", d.path)
		}
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, unix.ENOENT) || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("dial containerd at %s: %w%s", d.path, err, d.threadNote())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// threadNote describes the calling thread's namespaces when they differ from
// the ones New ran in ("" otherwise).
func (d *socketDialer) threadNote() string {
	net, mnt := threadNamespaces()
	if net == d.netNS && mnt == d.mntNS {
		return ""
	}
	return fmt.Sprintf(" (dialing thread %d is in %s %s, the client was made in %s %s)", unix.Gettid(), net, mnt, d.netNS, d.mntNS)
}

// threadNamespaces returns the calling thread's network and mount namespaces
// (as their /proc links read, e.g. "net:[4026531840]").
func threadNamespaces() (netNS, mntNS string) {
	netNS, _ = os.Readlink("/proc/thread-self/ns/net")
	mntNS, _ = os.Readlink("/proc/thread-self/ns/mnt")
	return netNS, mntNS
}
