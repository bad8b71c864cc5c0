package compat

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"
	"k8s.io/client-go/rest"
)

// maxBody is how much of each body an exchange keeps.
const maxBody = 4096

// exchange is one recorded HTTP request and its response.
type exchange struct {
	Method, URL        string
	ReqType, ReqAccept string
	ReqBody            []byte
	Status             int
	RespType           string
	RespBody           []byte
	Err                error
	Streamed           bool
}

func (e exchange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n  request  Content-Type: %q Accept: %q\n", e.Method, e.URL, e.ReqType, e.ReqAccept)
	if len(e.ReqBody) > 0 {
		fmt.Fprintf(&b, "  request body (%d B): %s\n", len(e.ReqBody), showBody(e.ReqType, e.ReqBody))
	}
	if e.Err != nil {
		fmt.Fprintf(&b, "  transport error: %v\n", e.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "  response %d Content-Type: %q", e.Status, e.RespType)
	switch {
	case e.Streamed:
		b.WriteString(" (watch stream, body not recorded)\n")
	case len(e.RespBody) > 0:
		fmt.Fprintf(&b, "\n  response body: %s\n", showBody(e.RespType, e.RespBody))
	default:
		b.WriteString("\n")
	}
	return b.String()
}

func showBody(ct string, body []byte) string {
	if strings.Contains(ct, "protobuf") {
		return "hex " + hex.EncodeToString(body) + "\n    quoted " + fmt.Sprintf("%q", body)
	}
	return string(body)
}

// recorder is an http.RoundTripper that records every exchange into log.
type recorder struct {
	next http.RoundTripper
	log  *exchangeLog
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	e := exchange{Method: req.Method, URL: req.URL.RequestURI(),
		ReqType: req.Header.Get("Content-Type"), ReqAccept: req.Header.Get("Accept")}
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		e.ReqBody = clip(body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		e.Err = err
		r.log.add(e)
		return resp, err
	}
	e.Status, e.RespType = resp.StatusCode, resp.Header.Get("Content-Type")
	if q := req.URL.Query().Get("watch"); q == "true" || q == "1" {
		e.Streamed = true
		r.log.add(e)
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	e.RespBody = clip(body)
	e.Err = err
	r.log.add(e)
	return resp, nil
}

func clip(b []byte) []byte {
	if len(b) > maxBody {
		return append(bytes.Clone(b[:maxBody]), "…(truncated)"...)
	}
	return bytes.Clone(b)
}

// traced returns a rest.Config for env whose requests land in one shared
// exchange log, dumped when t fails (every exchange with COMPAT_TRACE=1,
// otherwise the failed ones and the protobuf writes).
func traced(t *testing.T, env *testenv.Environment) (*rest.Config, *exchangeLog) {
	t.Helper()
	log := &exchangeLog{}
	cfg := &rest.Config{Host: env.URL}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recorder{next: rt, log: log} })
	t.Cleanup(func() {
		all := os.Getenv("COMPAT_TRACE") != ""
		if !t.Failed() && !all {
			return
		}
		var b strings.Builder
		for _, e := range log.exchanges() {
			if all || e.Err != nil || e.Status >= 400 {
				b.WriteString(e.String())
			}
		}
		t.Logf("recorded exchanges (%s):\n%s", map[bool]string{true: "all", false: "failed ones"}[all], b.String())
	})
	return cfg, log
}

// exchangeLog is the shared, ordered log of a test's exchanges.
type exchangeLog struct {
	mu  sync.Mutex
	log []exchange
}

func (l *exchangeLog) add(e exchange) {
	l.mu.Lock()
	l.log = append(l.log, e)
	l.mu.Unlock()
}

func (l *exchangeLog) exchanges() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]exchange(nil), l.log...)
}

// count returns how many recorded exchanges match.
func (l *exchangeLog) count(match func(exchange) bool) int {
	n := 0
	for _, e := range l.exchanges() {
		if match(e) {
			n++
		}
	}
	return n
}

// eventually polls cond every 50ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
