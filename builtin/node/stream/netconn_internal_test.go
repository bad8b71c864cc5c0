package stream

import (
	"bytes"
	"net"
	"testing"
)

// recordConn records each Write.
type recordConn struct {
	net.Conn
	writes [][]byte
}

func (c *recordConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func frame(streamID byte, data string) []byte {
	n := len(data)
	return append([]byte{0, 0, 0, streamID, 0, byte(n >> 16), byte(n >> 8), byte(n)}, data...)
}

func TestFrameConnWritesWholeFrames(t *testing.T) {
	t.Parallel()
	a, b, empty := frame(1, "hello"), frame(3, string(bytes.Repeat([]byte{'x'}, 70000))), frame(5, "")
	all := append(append(append([]byte{}, a...), b...), empty...)
	for _, tt := range []struct {
		name   string
		pieces [][]byte
	}{
		{"as spdystream writes them", [][]byte{a[:4], a[4:8], a[8:], b[:4], b[4:8], b[8:], empty[:4], empty[4:]}},
		{"all at once", [][]byte{all}},
		{"byte by byte", func() [][]byte {
			var out [][]byte
			for i := range all {
				out = append(out, all[i:i+1])
			}
			return out
		}()},
		{"across frames", [][]byte{all[:3], all[3:20], all[20:]}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := &recordConn{}
			fc := &frameConn{Conn: rc}
			for _, p := range tt.pieces {
				if n, err := fc.Write(p); err != nil || n != len(p) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			want := [][]byte{a, b, empty}
			if len(rc.writes) != len(want) {
				t.Fatalf("%d writes, want %d", len(rc.writes), len(want))
			}
			for i := range want {
				if !bytes.Equal(rc.writes[i], want[i]) {
					t.Errorf("write %d = %d bytes, want frame of %d", i, len(rc.writes[i]), len(want[i]))
				}
			}
		})
	}
}
