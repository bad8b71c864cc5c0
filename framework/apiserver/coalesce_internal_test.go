package apiserver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// recordingConn records what is written to it; writes fail once fail is set.
type recordingConn struct {
	net.Conn // nil: only Write and Close are used

	mu     sync.Mutex
	writes [][]byte
	fail   error
	closed bool
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return 0, c.fail
	}
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *recordingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *recordingConn) written() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Join(c.writes, nil)
}

func TestCoalescedConnHoldsSmallWriteForTheNext(t *testing.T) {
	rc := &recordingConn{}
	c := newCoalescedConn(rc)
	small, large := bytes.Repeat([]byte("h"), 35), bytes.Repeat([]byte("d"), 1400)
	if n, err := c.Write(small); n != len(small) || err != nil {
		t.Fatalf("small write: %d, %v", n, err)
	}
	if got := rc.written(); len(got) != 0 {
		t.Fatalf("the small write went out on its own (%d bytes)", len(got))
	}
	if n, err := c.Write(large); n != len(large) || err != nil {
		t.Fatalf("large write: %d, %v", n, err)
	}
	if got, want := rc.written(), append(bytes.Clone(small), large...); !bytes.Equal(got, want) {
		t.Fatalf("wrote %d bytes, want the small then the large write (%d bytes)", len(got), len(want))
	}
	if n, err := c.Write(large); n != len(large) || err != nil || len(rc.written()) != len(small)+2*len(large) {
		t.Fatalf("a large write with nothing held: %d, %v", n, err)
	}
}

func TestCoalescedConnWritesAHeldWriteAlone(t *testing.T) {
	rc := &recordingConn{}
	c := newCoalescedConn(rc)
	if _, err := c.Write([]byte("ping-ack")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for string(rc.written()) != "ping-ack" {
		if time.Now().After(deadline) {
			t.Fatalf("held write not written %v after it", 5*time.Second)
		}
		time.Sleep(holdSmallWrite)
	}
}

func TestCoalescedConnCloseWritesHeld(t *testing.T) {
	rc := &recordingConn{}
	c := newCoalescedConn(rc)
	if _, err := c.Write([]byte("goaway")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := string(rc.written()); got != "goaway" || !rc.closed {
		t.Fatalf("after Close: wrote %q, closed %v; want the held write, then closed", got, rc.closed)
	}
}

func TestCoalescedConnReportsAHeldWritesError(t *testing.T) {
	rc := &recordingConn{fail: errors.New("broken pipe")}
	c := newCoalescedConn(rc)
	if _, err := c.Write([]byte("small")); err != nil {
		t.Fatal(err)
	}
	c.flushHeld() // as the timer does
	if _, err := c.Write(make([]byte, 1000)); err == nil || err.Error() != "broken pipe" {
		t.Fatalf("write after a failed held write: %v, want broken pipe", err)
	}
}

// TestCoalescedConnOneSegment checks over TCP that a held write and the next
// arrive together (one writev), which is the point.
func TestCoalescedConnOneSegment(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := coalescingListener{ln}.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer server.Close()
	small, large := bytes.Repeat([]byte("h"), 35), bytes.Repeat([]byte("d"), 1400)
	if _, err := server.Write(small); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Write(large); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := client.Read(buf)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if n != len(small)+len(large) {
		t.Fatalf("first read returned %d bytes, want both writes' %d", n, len(small)+len(large))
	}
}

// TestCoalescedConnCloseBreaksABlockedWrite: a peer that stops reading blocks
// a Write; Close (as crypto/tls calls it to break an in-flight Write) must
// return and end that Write, not wait for it.
func TestCoalescedConnCloseBreaksABlockedWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			peer <- c
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer (<-peer).Close() // never read
	c := newCoalescedConn(raw)
	if _, err := c.Write([]byte("small")); err != nil { // held
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		big := make([]byte, 1<<20)
		for {
			if _, err := c.Write(big); err != nil {
				wrote <- err
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // the socket buffers fill, Write blocks
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for a blocked Write")
	}
	select {
	case err := <-wrote:
		if err == nil {
			t.Fatal("the blocked Write ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the blocked Write")
	}
}
