package cli

import (
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

func TestUpRejectsBadMemoryLimit(t *testing.T) {
	c := &cli{t: t}
	for _, v := range []string{"lots", "-1Gi", "0"} {
		if msg := c.failsWith("up", "--memory-limit", v, "--data-dir", t.TempDir()); !strings.Contains(msg, "--memory-limit") {
			t.Errorf("--memory-limit %s: %q, want it named", v, msg)
		}
	}
}

func TestRejectsBadHTTP2Server(t *testing.T) {
	c := &cli{t: t}
	for _, command := range []string{"up", "apiserver"} {
		msg := c.failsWith(command, "--http2-server", "nghttp2", "--data-dir", t.TempDir())
		if !strings.Contains(msg, "--http2-server") || !strings.Contains(msg, "converge") || !strings.Contains(msg, "go") {
			t.Errorf("converge %s --http2-server nghttp2: %q, want the flag and its values named", command, msg)
		}
	}
}

// TestHTTP2Server: HTTP/2 clients are served by Converge's HTTP/2 server by
// default and by Go's with --http2-server=go, on `converge up` and
// `converge apiserver` alike. The servers differ in their first SETTINGS
// frame (see http2ServerAt).
func TestHTTP2Server(t *testing.T) {
	for _, tc := range []struct {
		command string
		flags   []string
		want    string
	}{
		{"apiserver", nil, http2ServerConverge},
		{"up", []string{"--http2-server=go", "--no-node"}, http2ServerGo},
		{"apiserver", []string{"--http2-server=go"}, http2ServerGo},
	} {
		t.Run(tc.command+strings.Join(tc.flags, ""), func(t *testing.T) {
			port := freePort(t)
			stop, out := startServer(t, tc.command, t.TempDir(), port, tc.flags...)
			defer func() {
				if code, _ := stop(); code != 0 {
					t.Errorf("exit %d:\n%s", code, out)
				}
			}()
			addr := "127.0.0.1:" + strconv.Itoa(port)
			client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true,
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // only the protocol matters
			resp, err := client.Get("https://" + addr + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Errorf("/healthz over %s, want HTTP/2", resp.Proto)
			}
			if got := http2ServerAt(t, addr); got != tc.want {
				t.Errorf("HTTP/2 served by %s, want %s", got, tc.want)
			}
		})
	}
}

// http2ServerAt is which HTTP/2 server answers at addr, told by its first
// SETTINGS frame: Go's always states SETTINGS_HEADER_TABLE_SIZE (its HPACK
// decoder's table, http.HTTP2Config.MaxDecoderHeaderTableSize), ours leaves
// it at the protocol's default and does not.
func http2ServerAt(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}) //nolint:gosec // only the protocol matters
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN negotiated %q, want h2", p)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("first frame from the server: %v, want SETTINGS", f)
	}
	if _, ok := sf.Value(http2.SettingHeaderTableSize); ok {
		return http2ServerGo
	}
	return http2ServerConverge
}
