package stream

import (
	"context"
	"net"
	"sync"

	"github.com/coder/websocket"
)

// websocketNetConn carries a byte stream in the binary messages of c (a
// SPDY session tunnelled through a WebSocket).
func websocketNetConn(ctx context.Context, c *websocket.Conn) net.Conn {
	return websocket.NetConn(ctx, c, websocket.MessageBinary)
}

// frameConn writes whole SPDY frames: spdystream's framer writes a data
// frame as three writes (stream ID, flags and length, data), which would be
// three syscalls on TCP and three messages in a WebSocket tunnel. Every frame
// starts with 8 bytes whose last 3 are the length of what follows.
type frameConn struct {
	net.Conn

	mu  sync.Mutex
	buf []byte // the frame being assembled; guarded by mu
}

const spdyHeaderLen = 8

func (c *frameConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if len(c.buf) < spdyHeaderLen {
			k := min(spdyHeaderLen-len(c.buf), len(p))
			c.buf = append(c.buf, p[:k]...)
			p = p[k:]
			if len(c.buf) < spdyHeaderLen {
				break
			}
		}
		total := spdyHeaderLen + (int(c.buf[5])<<16 | int(c.buf[6])<<8 | int(c.buf[7]))
		k := min(total-len(c.buf), len(p))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == total {
			_, err := c.Conn.Write(c.buf)
			c.buf = c.buf[:0]
			if cap(c.buf) > 1<<20 {
				c.buf = nil // keep no large buffer for a quiet connection
			}
			if err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}
