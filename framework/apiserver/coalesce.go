package apiserver

import (
	"net"
	"sync"
	"time"
)

// smallWrite is the largest write coalescedConn holds back: a TLS record of
// one small HTTP/2 frame (a response's HEADERS with an indexed header block,
// a WINDOW_UPDATE, a SETTINGS or PING acknowledgement) is 31–64 bytes.
const smallWrite = 96

// holdSmallWrite is how long coalescedConn holds a small write back at most:
// in the secure create benchmark (c=64, 2 busy cores) the DATA frame's write
// follows its HEADERS' within it all but ≈1 % of the time.
const holdSmallWrite = 500 * time.Microsecond

// coalescingListener accepts connections that write a small write together
// with the next one (coalescedConn). Serve puts it under TLS.
type coalescingListener struct{ net.Listener }

// Accept implements net.Listener.
func (l coalescingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newCoalescedConn(c), nil
}

// coalescedConn holds a write of at most smallWrite bytes back and writes it
// with the next write (one writev), or on its own after holdSmallWrite when
// none follows, or before closing. Go's HTTP/2 server writes a response's
// HEADERS frame and hands the handler's DATA frame to its connection
// goroutine only after that write; whenever its queue runs empty in between
// (0.4–0.75 times per response in the secure create benchmark) it flushes the HEADERS
// alone: a 35-byte TLS record and one more write(2) per response, and one
// more segment for the client to read. A held write's error is returned by
// the next Write.
type coalescedConn struct {
	net.Conn

	mu    sync.Mutex
	held  []byte
	timer *time.Timer
	err   error // a held write's error, returned by the next Write
}

func newCoalescedConn(c net.Conn) *coalescedConn {
	cc := &coalescedConn{Conn: c}
	cc.timer = time.AfterFunc(time.Hour, cc.flushHeld)
	cc.timer.Stop()
	return cc
}

// Write implements net.Conn.
func (c *coalescedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if len(c.held) > 0 {
		c.timer.Stop()
		bufs := net.Buffers{c.held, p}
		n, err := bufs.WriteTo(c.Conn)
		held := len(c.held)
		c.held = c.held[:0]
		if err != nil {
			c.err = err
			return max(0, int(n)-held), err
		}
		return len(p), nil
	}
	if len(p) <= smallWrite {
		c.held = append(c.held, p...)
		c.timer.Reset(holdSmallWrite)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// flushHeld writes the held write when no other followed in time.
func (c *coalescedConn) flushHeld() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeHeld()
}

// writeHeld writes the held write; c.mu is held.
func (c *coalescedConn) writeHeld() {
	if len(c.held) == 0 || c.err != nil {
		return
	}
	_, err := c.Conn.Write(c.held)
	c.held = c.held[:0]
	if err != nil {
		c.err = err
	}
}

// Close writes the held write and closes the connection. A Close during a
// Write that blocks (a peer that stopped reading; crypto/tls closes the
// connection under a Write to break it) closes at once, which ends that
// Write, and the held write is dropped with the connection.
func (c *coalescedConn) Close() error {
	if c.mu.TryLock() {
		c.timer.Stop()
		c.writeHeld()
		c.mu.Unlock()
	}
	return c.Conn.Close()
}
