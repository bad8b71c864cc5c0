package h2serve

import (
	"time"

	"golang.org/x/net/http2"
)

// flushLocked writes the pending frames unless another goroutine is writing
// them (it will write these too): the caller becomes the writer, writing
// without the lock, again while more was appended meanwhile. It returns with
// c.mu held, false when the connection has failed.
func (c *conn) flushLocked() bool {
	if c.werr != nil {
		c.wbuf = c.wbuf[:0]
		return false
	}
	if c.flushing || len(c.wbuf) == 0 {
		return true
	}
	c.flushing = true
	for len(c.wbuf) > 0 && c.werr == nil {
		buf := c.wbuf
		c.wbuf, c.spare = c.spare[:0], nil
		var deadline time.Time
		if now := time.Now(); now.Sub(c.lastWD) > time.Second {
			c.lastWD, deadline = now, now.Add(c.cfg.WriteTimeout)
		}
		c.mu.Unlock()
		if !deadline.IsZero() {
			_ = c.nc.SetWriteDeadline(deadline)
		}
		_, err := c.nc.Write(buf)
		c.mu.Lock()
		if cap(buf) <= 2*pendingHighWater {
			c.spare = buf[:0]
		}
		if err != nil && c.werr == nil {
			c.werr = err
		}
	}
	c.flushing = false
	if c.waiters > 0 {
		c.cond.Broadcast()
	}
	if c.werr != nil {
		c.wbuf = c.wbuf[:0]
		c.closeLocked(false)
		return false
	}
	if c.closeWhenFlushed {
		c.closeLocked(true)
	}
	return true
}

// writeHeadersLocked appends the header block in c.hbuf as HEADERS and
// CONTINUATION frames of stream id.
func (c *conn) writeHeadersLocked(id uint32, endStream bool) {
	block := c.hbuf.Bytes()
	max := int(c.peerMaxFrame)
	first := true
	for first || len(block) > 0 {
		n := min(len(block), max)
		frag := block[:n]
		block = block[n:]
		if first {
			_ = c.wfr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: frag, EndStream: endStream, EndHeaders: len(block) == 0})
			first = false
		} else {
			_ = c.wfr.WriteContinuation(id, len(block) == 0, frag)
		}
	}
	c.hbuf.Reset()
}

// writeDataLocked appends data as DATA frames of st, END_STREAM on the last
// when end, as the flow-control windows and the peer's frame size allow:
// it waits for WINDOW_UPDATE, and while too much is pending, for the writer.
// It fails when st is reset or the connection has ended.
func (c *conn) writeDataLocked(st *stream, data []byte, end bool) error {
	for {
		if st.resetErr != nil {
			return st.resetErr
		}
		if c.werr != nil {
			return errClosed
		}
		if len(data) == 0 {
			if end {
				_ = c.wfr.WriteData(st.id, true, nil)
				c.localEndLocked(st)
			}
			return nil
		}
		if len(c.wbuf) >= pendingHighWater {
			if !c.flushing {
				c.flushLocked()
				continue
			}
			c.waiters++
			c.cond.Wait()
			c.waiters--
			continue
		}
		n := int64(min(len(data), int(c.peerMaxFrame)))
		n = min(n, st.sendWindow, c.sendWindow)
		if n <= 0 {
			// Let the peer have what is pending: it answers with WINDOW_UPDATE.
			c.flushLocked()
			if st.resetErr != nil || c.werr != nil {
				continue
			}
			if st.sendWindow <= 0 {
				st.cond.Wait()
			} else if c.sendWindow <= 0 {
				c.waiters++
				c.cond.Wait()
				c.waiters--
			}
			continue
		}
		last := end && int(n) == len(data)
		_ = c.wfr.WriteData(st.id, last, data[:n])
		st.sendWindow -= n
		c.sendWindow -= n
		data = data[n:]
		if last {
			c.localEndLocked(st)
			return nil
		}
	}
}

// localEndLocked notes END_STREAM sent on st.
func (c *conn) localEndLocked(st *stream) {
	st.localClosed = true
	if st.remoteClosed {
		c.removeStreamLocked(st)
	}
}
