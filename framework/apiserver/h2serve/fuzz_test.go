package h2serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// fuzzBound is how long one input may take to be served and ended; more is
// a hang.
const fuzzBound = 3 * time.Second

// fuzzConfig has small limits so that inputs reach them: few streams (the
// handler queue and refusal), small windows (flow control on both sides)
// and a small header list (431).
func fuzzConfig() Config {
	return Config{
		MaxConcurrentStreams: 4,
		MaxReadFrameSize:     16 << 10,
		StreamWindow:         4 << 10,
		ConnWindow:           1 << 20,
		MaxHeaderListSize:    2 << 10,
		IdleTimeout:          -1,
		PrefaceTimeout:       fuzzBound,
		WriteTimeout:         fuzzBound,
		Logger:               logr.Discard(),
	}
}

// fuzzHandler behaves by path: reads the body and answers in two flushed
// parts; /big answers more than the windows allow; /early answers without
// reading the body; /info sends an informational response first; /abort and
// /panic panic.
func fuzzHandler(running *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Add(1)
		defer running.Add(-1)
		switch r.URL.Path {
		case "/abort":
			panic(http.ErrAbortHandler)
		case "/panic":
			panic("fuzz")
		case "/early":
			w.WriteHeader(http.StatusNoContent)
			return
		case "/info":
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
		}
		n, err := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = fmt.Fprintf(w, "read %d %v\n", n, err)
		w.(http.Flusher).Flush()
		if r.URL.Path == "/big" {
			_, _ = w.Write(make([]byte, 70000))
		}
		_, _ = io.WriteString(w, "done\n")
	})
}

// pingAck is the payload of the PING that follows a well-framed input: its
// ACK tells that the server has processed every frame of the input.
var pingAck = [8]byte{'f', 'u', 'z', 'z', 'p', 'i', 'n', 'g'}

// FuzzConn serves the bytes a client sends after the connection preface
// over an in-memory connection (net.Pipe: no TLS state, no CloseWrite). Every
// input must end (the client closes its side at the end of the input, after
// the server has answered a final PING when the input is whole frames)
// within fuzzBound without a panic, with no handler left running once the
// connection has ended; what the server wrote must be well-formed HTTP/2
// frames that keep to stream states, the client's flow-control windows and
// frame size, and the responses' content-length (readServerFrames).
func FuzzConn(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		serveFuzzInput(t, input)
	})
}

// serveFuzzInput serves input as one connection and checks how it ended.
func serveFuzzInput(t *testing.T, input []byte) {
	srv := New(fuzzConfig())
	defer srv.Shutdown()
	var running atomic.Int64
	client, server := net.Pipe()

	// The reader of what the server sends: it parses frames and notes the
	// ACK of the final PING.
	acked := make(chan struct{})
	readDone := make(chan struct{})
	var readErr error
	go func() {
		defer close(readDone)
		readErr = readServerFrames(client, allowance(input, fuzzConfig().MaxReadFrameSize), acked)
	}()

	noAck := make(chan string, 1)
	// The client: preface, input, a PING when the input ends on a frame
	// boundary (to let the server process it all), then the end.
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		defer client.Close()
		if _, err := io.WriteString(client, clientPreface); err != nil {
			return
		}
		if _, err := client.Write(input); err != nil {
			return
		}
		if !framed(input) {
			return
		}
		var ping [9 + 8]byte
		ping[2], ping[3] = 8, byte(http2.FramePing)
		copy(ping[9:], pingAck[:])
		if _, err := client.Write(ping[:]); err != nil {
			return
		}
		select {
		case <-acked:
		case <-readDone:
			// The server ended the connection (or sent something malformed: checked below).
		case <-time.After(fuzzBound / 2):
			noAck <- goroutines()
		}
	}()

	// ServeConn's own part (the Server's set of connections) is left out
	// to keep c, whose running handlers are counted below.
	c := newConn(srv, context.Background(), server, fuzzHandler(&running))
	served := make(chan struct{})
	go func() {
		defer close(served)
		c.serve()
	}()
	deadline := time.NewTimer(fuzzBound)
	defer deadline.Stop()
	select {
	case <-served:
	case <-deadline.C:
		t.Fatalf("the connection did not end within %v of its input ending (a hang):\n%s", fuzzBound, goroutines())
	}
	select {
	case dump := <-noAck:
		t.Fatalf("the server neither answered the PING after the input nor ended the connection within %v:\n%s", fuzzBound/2, dump)
	default:
	}
	// Handlers end once their connection has: reads and writes fail.
	for {
		c.mu.Lock()
		n := c.running
		c.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-deadline.C:
			t.Fatalf("%d handlers still run %v after their connection ended:\n%s", n, fuzzBound, goroutines())
		default:
			runtime.Gosched()
		}
	}
	if n := running.Load(); n != 0 {
		t.Fatalf("%d handlers still run after the connection's running count dropped to zero", n)
	}
	select {
	case <-readDone:
		if readErr != nil {
			t.Fatalf("server sent malformed frames: %v", readErr)
		}
	case <-deadline.C:
		t.Fatalf("the client's reader did not end:\n%s", goroutines())
	}
	select {
	case <-clientDone:
	case <-deadline.C:
		t.Fatalf("the client's writer did not end:\n%s", goroutines())
	}
}

// readServerFrames parses what the server sends until the connection ends
// and checks it against what the client allowed (allowed) and the rules of
// stream states; an error when something is malformed or wrong. acked is
// closed on the ACK of the final PING.
func readServerFrames(client net.Conn, allowed clientAllowance, acked chan struct{}) error {
	defer func() { _, _ = io.Copy(io.Discard, client) }()
	fr := http2.NewFramer(nil, client)
	fr.SetMaxReadFrameSize(1<<24 - 1)
	fr.MaxHeaderListSize = 1 << 30
	dec := hpack.NewDecoder(4096, nil)
	dec.SetAllowedMaxDynamicTableSize(1 << 30)
	fr.ReadMetaHeaders = dec
	type streamState struct {
		final, ended bool // final HEADERS sent; END_STREAM or RST_STREAM sent
		declared     int64
		sent         int64
	}
	streams := map[uint32]*streamState{}
	var connSent int64
	lastGoAway := uint32(1<<31 - 1)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			// The end of the connection, possibly in the middle of a frame
			// when a writer's connection was closed under it.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) {
				return nil
			}
			return err
		}
		id := f.Header().StreamID
		st := streams[id]
		if st == nil {
			st = &streamState{declared: -1}
			streams[id] = st
		}
		switch f := f.(type) {
		case *http2.PingFrame:
			if f.IsAck() && f.Data == pingAck {
				close(acked)
			}
		case *http2.GoAwayFrame:
			if f.LastStreamID > lastGoAway {
				return fmt.Errorf("GOAWAY's last stream went up from %d to %d", lastGoAway, f.LastStreamID)
			}
			lastGoAway = f.LastStreamID
		case *http2.RSTStreamFrame:
			st.ended = true
		case *http2.MetaHeadersFrame:
			switch {
			case id%2 == 0:
				return fmt.Errorf("HEADERS on stream %d", id)
			case st.ended:
				return fmt.Errorf("HEADERS on stream %d after it ended", id)
			case st.final:
				return fmt.Errorf("a second final HEADERS (trailers?) on stream %d", id)
			}
			status := f.PseudoValue("status")
			if len(status) != 3 || status[0] < '1' || status[0] > '9' {
				return fmt.Errorf("HEADERS on stream %d with :status %q", id, status)
			}
			if status[0] != '1' {
				st.final = true
				if cl := f.Header().Length; cl >= 0 {
					for _, hf := range f.RegularFields() {
						if hf.Name == "content-length" {
							_, _ = fmt.Sscan(hf.Value, &st.declared)
						}
					}
				}
			} else if f.StreamEnded() {
				return fmt.Errorf("informational HEADERS ending stream %d", id)
			}
			st.ended = st.ended || f.StreamEnded()
		case *http2.DataFrame:
			n := int64(f.Length)
			st.sent += n
			connSent += n
			switch {
			case id%2 == 0:
				return fmt.Errorf("DATA on stream %d", id)
			case !st.final:
				return fmt.Errorf("DATA on stream %d before its final HEADERS", id)
			case st.ended:
				return fmt.Errorf("DATA on stream %d after it ended", id)
			case f.Length > allowed.maxFrame:
				return fmt.Errorf("DATA of %d bytes, over the client's largest SETTINGS_MAX_FRAME_SIZE %d", f.Length, allowed.maxFrame)
			case connSent > allowed.conn:
				return fmt.Errorf("%d DATA bytes sent, over the %d the client's connection window allowed", connSent, allowed.conn)
			case st.sent > allowed.stream(id):
				return fmt.Errorf("%d DATA bytes sent on stream %d, over the %d its window allowed", st.sent, id, allowed.stream(id))
			case st.declared >= 0 && st.sent > st.declared:
				return fmt.Errorf("%d DATA bytes sent on stream %d, over its content-length %d", st.sent, id, st.declared)
			}
			st.ended = f.StreamEnded()
		}
	}
}

// clientAllowance bounds what the server may send, by the client's frames:
// the connection window and each stream's (with the largest initial window
// the client set) and the largest frame size the client set.
type clientAllowance struct {
	conn     int64
	maxInit  int64
	updates  map[uint32]int64
	maxFrame uint32
}

func (a clientAllowance) stream(id uint32) int64 { return a.maxInit + a.updates[id] }

// allowance scans input's frames (until one is not whole or over the
// server's frame size) for what they allow the server to send.
func allowance(input []byte, maxReadFrame uint32) clientAllowance {
	a := clientAllowance{conn: initialWindow, maxInit: initialWindow, updates: map[uint32]int64{}, maxFrame: 1 << 14}
	for len(input) >= 9 {
		n := uint32(input[0])<<16 | uint32(input[1])<<8 | uint32(input[2])
		if n > maxReadFrame || int(n) > len(input)-9 {
			break
		}
		typ, flags, id := http2.FrameType(input[3]), http2.Flags(input[4]), binary.BigEndian.Uint32(input[5:])&(1<<31-1)
		payload := input[9 : 9+n]
		input = input[9+n:]
		switch {
		case typ == http2.FrameWindowUpdate && n == 4:
			inc := int64(binary.BigEndian.Uint32(payload) & (1<<31 - 1))
			if id == 0 {
				a.conn += inc
			} else {
				a.updates[id] += inc
			}
		case typ == http2.FrameSettings && flags&http2.FlagSettingsAck == 0 && n%6 == 0:
			for ; len(payload) >= 6; payload = payload[6:] {
				v := binary.BigEndian.Uint32(payload[2:])
				switch http2.SettingID(binary.BigEndian.Uint16(payload)) {
				case http2.SettingInitialWindowSize:
					a.maxInit = max(a.maxInit, int64(v))
				case http2.SettingMaxFrameSize:
					a.maxFrame = max(a.maxFrame, v)
				}
			}
		}
	}
	return a
}

// framed reports whether input is a whole number of frames (by their
// lengths).
func framed(input []byte) bool {
	for len(input) > 0 {
		if len(input) < 9 {
			return false
		}
		n := 9 + int(input[0])<<16 + int(input[1])<<8 + int(input[2])
		if n > len(input) {
			return false
		}
		input = input[n:]
	}
	return true
}

// goroutines is a dump of all goroutines (bounded) for a hang's report.
func goroutines() string {
	buf := make([]byte, 256<<10)
	return string(buf[:runtime.Stack(buf, true)])
}

// fuzzSeeds are valid and invalid frame sequences, written with a Framer.
func fuzzSeeds() [][]byte {
	type seed func(s *seedWriter)
	seeds := []seed{
		// Only SETTINGS; then an ACK of ours.
		func(s *seedWriter) { s.settings() },
		func(s *seedWriter) { s.settings(); _ = s.fr.WriteSettingsAck() },
		// GET.
		func(s *seedWriter) { s.settings(); s.get(1, "/") },
		// POST with a body in two DATA frames, content-length given.
		func(s *seedWriter) {
			s.settings()
			s.post(1, "/", 10, false)
			_ = s.fr.WriteData(1, false, []byte("hello"))
			_ = s.fr.WriteData(1, true, []byte("world"))
		},
		// POST with padded HEADERS (with priority) and padded DATA.
		func(s *seedWriter) {
			s.settings()
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: s.block("POST", "/", nil), EndHeaders: true,
				PadLength: 7, Priority: http2.PriorityParam{StreamDep: 0, Weight: 15, Exclusive: true}})
			_ = s.fr.WriteDataPadded(1, false, []byte("abc"), make([]byte, 20))
			_ = s.fr.WriteDataPadded(1, true, nil, make([]byte, 3))
		},
		// HEADERS split by CONTINUATION.
		func(s *seedWriter) {
			s.settings()
			b := s.block("GET", "/flush", [][2]string{{"x-long", strings.Repeat("a", 40)}})
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:5], EndStream: true})
			_ = s.fr.WriteContinuation(1, false, b[5:10])
			_ = s.fr.WriteContinuation(1, true, b[10:])
		},
		// Window updates, PING, PRIORITY and RST_STREAM around a large response.
		func(s *seedWriter) {
			s.settings()
			s.get(1, "/big")
			_ = s.fr.WriteWindowUpdate(0, 100000)
			_ = s.fr.WriteWindowUpdate(1, 100000)
			_ = s.fr.WritePing(false, [8]byte{1, 2, 3})
			_ = s.fr.WritePriority(3, http2.PriorityParam{StreamDep: 1, Weight: 3})
			s.get(5, "/big")
			_ = s.fr.WriteRSTStream(5, http2.ErrCodeCancel)
			_ = s.fr.WriteWindowUpdate(1, 100000)
		},
		// A request body nobody reads, and an early answer.
		func(s *seedWriter) {
			s.settings()
			s.post(1, "/early", -1, false)
			_ = s.fr.WriteData(1, false, make([]byte, 1000))
			_ = s.fr.WriteData(1, true, make([]byte, 1000))
		},
		// Informational response, handler panics.
		func(s *seedWriter) {
			s.settings()
			s.get(1, "/info")
			s.get(3, "/abort")
			s.get(5, "/panic")
		},
		// Trailers.
		func(s *seedWriter) {
			s.settings()
			s.post(1, "/", -1, false)
			_ = s.fr.WriteData(1, false, []byte("body"))
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndStream: true, EndHeaders: true,
				BlockFragment: s.fields([][2]string{{"x-trailer", "v"}})})
		},
		// Graceful GOAWAY with a stream running, and GOAWAY with an error.
		func(s *seedWriter) {
			s.settings()
			s.post(1, "/", -1, false)
			_ = s.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
			_ = s.fr.WriteData(1, true, []byte("x"))
		},
		func(s *seedWriter) {
			s.settings()
			s.get(1, "/")
			_ = s.fr.WriteGoAway(0, http2.ErrCodeProtocol, []byte("debug"))
		},
		// More streams than MaxConcurrentStreams, then rapid resets.
		func(s *seedWriter) {
			s.settings()
			for id := uint32(1); id < 24; id += 2 {
				s.post(id, "/", -1, false)
			}
			for id := uint32(1); id < 24; id += 2 {
				_ = s.fr.WriteRSTStream(id, http2.ErrCodeCancel)
			}
		},
		// SETTINGS changing the window, frame size and header table mid-response.
		func(s *seedWriter) {
			s.settings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
			s.get(1, "/big")
			s.settings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20},
				http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20},
				http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
			s.get(3, "/")
		},
		// A header list over MaxHeaderListSize (431).
		func(s *seedWriter) {
			s.settings()
			b := s.block("GET", "/", [][2]string{{"x-a", strings.Repeat("a", 3000)}})
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b, EndStream: true, EndHeaders: true})
		},
		// A body over the stream window, and over its content-length.
		func(s *seedWriter) {
			s.settings()
			s.post(1, "/", -1, false)
			_ = s.fr.WriteData(1, true, make([]byte, 5000))
			s.post(3, "/", 2, false)
			_ = s.fr.WriteData(3, true, []byte("abc"))
		},
		// Malformed: first frame not SETTINGS.
		func(s *seedWriter) { s.get(1, "/") },
		// Malformed lengths: SETTINGS of 5 bytes, PING of 7, a zero WINDOW_UPDATE, DATA on stream 0.
		func(s *seedWriter) { s.settings(); s.raw(http2.FrameSettings, 0, 0, make([]byte, 5)) },
		func(s *seedWriter) { s.settings(); s.raw(http2.FramePing, 0, 0, make([]byte, 7)) },
		func(s *seedWriter) {
			s.settings()
			s.get(1, "/big")
			s.raw(http2.FrameWindowUpdate, 0, 1, make([]byte, 4))
		},
		func(s *seedWriter) { s.settings(); s.raw(http2.FrameData, 0, 0, []byte("x")) },
		// Padding longer than the frame.
		func(s *seedWriter) {
			s.settings()
			s.post(1, "/", -1, false)
			s.raw(http2.FrameData, http2.FlagDataPadded, 1, []byte{9, 'a'})
		},
		// A frame over MaxReadFrameSize, an unknown frame type, a lone CONTINUATION.
		func(s *seedWriter) {
			s.settings()
			s.raw(0xfa, 0xff, 1, []byte("unknown"))
			s.get(1, "/")
			s.raw(http2.FrameContinuation, http2.FlagContinuationEndHeaders, 1, nil)
		},
		func(s *seedWriter) { s.settings(); s.raw(http2.FrameData, 0, 1, make([]byte, 17<<10)) },
		// Requests of other shapes: HEAD, CONNECT, OPTIONS *, split cookies,
		// repeated content-length, a connection-specific field.
		func(s *seedWriter) {
			s.settings()
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: s.block("HEAD", "/big", nil), EndStream: true, EndHeaders: true})
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, EndStream: true, EndHeaders: true,
				BlockFragment: s.fields([][2]string{{":method", "CONNECT"}, {":authority", "localhost:443"}})})
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: s.block("OPTIONS", "*", nil), EndStream: true, EndHeaders: true})
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 7, EndStream: false, EndHeaders: true,
				BlockFragment: s.block("PUT", "/", [][2]string{{"cookie", "a=1"}, {"cookie", "b=2"}, {"content-length", "1"}, {"content-length", "1"}})})
			_ = s.fr.WriteData(7, true, []byte("x"))
			_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 9, BlockFragment: s.block("GET", "/", [][2]string{{"connection", "close"}}), EndStream: true, EndHeaders: true})
		},
		// HEADERS on an even stream, a closed stream, DATA on an idle one.
		func(s *seedWriter) { s.settings(); s.get(2, "/") },
		func(s *seedWriter) { s.settings(); s.get(3, "/"); s.get(1, "/") },
		func(s *seedWriter) { s.settings(); _ = s.fr.WriteData(7, true, []byte("x")) },
	}
	var out [][]byte
	for _, write := range seeds {
		s := newSeedWriter()
		write(s)
		out = append(out, bytes.Clone(s.buf.Bytes()))
	}
	return out
}

// seedWriter writes frames of a seed.
type seedWriter struct {
	buf  bytes.Buffer
	fr   *http2.Framer
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

func newSeedWriter() *seedWriter {
	s := &seedWriter{}
	s.fr = http2.NewFramer(&s.buf, nil)
	s.fr.AllowIllegalWrites = true
	s.enc = hpack.NewEncoder(&s.hbuf)
	return s
}

func (s *seedWriter) settings(settings ...http2.Setting) { _ = s.fr.WriteSettings(settings...) }

// fields is the header block of fields.
func (s *seedWriter) fields(fields [][2]string) []byte {
	s.hbuf.Reset()
	for _, f := range fields {
		_ = s.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return bytes.Clone(s.hbuf.Bytes())
}

// block is the header block of a request.
func (s *seedWriter) block(method, path string, extra [][2]string) []byte {
	return s.fields(append([][2]string{{":method", method}, {":scheme", "https"}, {":authority", "localhost"}, {":path", path}}, extra...))
}

func (s *seedWriter) get(id uint32, path string) {
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.block("GET", path, nil), EndStream: true, EndHeaders: true})
}

// post opens a POST of path (with content-length when length >= 0).
func (s *seedWriter) post(id uint32, path string, length int, end bool) {
	var extra [][2]string
	if length >= 0 {
		extra = [][2]string{{"content-length", fmt.Sprint(length)}}
	}
	_ = s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.block("POST", path, extra), EndStream: end, EndHeaders: true})
}

// raw writes a frame as given, valid or not.
func (s *seedWriter) raw(typ http2.FrameType, flags http2.Flags, id uint32, payload []byte) {
	var h [9]byte
	h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	h[3], h[4] = byte(typ), byte(flags)
	binary.BigEndian.PutUint32(h[5:], id)
	s.buf.Write(h[:])
	s.buf.Write(payload)
}
