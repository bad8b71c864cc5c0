package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCurl(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.RequestURI(), r.Header.Get("X-A"), b)
	}))
	t.Cleanup(srv.Close)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "tls") }))
	t.Cleanup(tls.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"the e2e dial command", []string{"-g", "-q", "-s", srv.URL + "/dial?request=hostname&tries=1"}, 0, "GET /dial?request=hostname&tries=1  "},
		{"options after the URL, no scheme", []string{host + "/hostname", "-q", "-s", "--connect-timeout", "2"}, 0, "GET /hostname  "},
		{"method, header and data", []string{"-sS", "-X", "PUT", "-H", "X-A: 1", "-d", "body", srv.URL}, 0, "PUT / 1 body"},
		{"from a local address", []string{"-g", "--connect-timeout", "5", "--interface", "127.0.0.1", srv.URL + "/hostname"}, 0, "GET /hostname  "},
		{"from an address that is not an IP", []string{"-s", "--interface", "eth0", srv.URL}, 45, ""},
		{"status code only", []string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", srv.URL + "/missing"}, 0, "404"},
		{"-f on an HTTP error", []string{"-s", "-f", srv.URL + "/missing"}, 22, ""},
		{"nothing listens", []string{"-q", "-s", "--connect-timeout", "2", "-w", "%{http_code}", "http://" + closed + "/"}, 7, "000"},
		{"an unknown host", []string{"-s", "http://no-such-host.invalid/"}, 6, ""},
		{"HTTPS with -k", []string{"-s", "-k", tls.URL}, 0, "tls"},
		{"HTTPS unverified without -k", []string{"-s", tls.URL}, 56, ""},
		{"no URL", []string{"-s"}, 2, ""},
		{"an unknown option", []string{"--frobnicate", srv.URL}, 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			if code := run(c.args, &out, &errOut); code != c.code || out.String() != c.out {
				t.Errorf("curl %q = %d, %q (stderr %q); want %d, %q", c.args, code, out.String(), errOut.String(), c.code, c.out)
			}
		})
	}
}
