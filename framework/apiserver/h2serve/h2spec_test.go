package h2serve_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/apiserver/h2serve"
)

// buildH2Spec builds h2spec, the HTTP/2 conformance tester, from the
// hack/tools module (so that it stays out of the main go.mod).
func buildH2Spec(t *testing.T) string {
	t.Helper()
	tools, err := filepath.Abs("../../../hack/tools")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "h2spec")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/summerwind/h2spec/cmd/h2spec")
	cmd.Dir = tools
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build h2spec in %s: %v\n%s", tools, err, out)
	}
	return bin
}

// h2specResult is what one h2spec run reported.
type h2specResult struct {
	total, passed, skipped, failed int
	failures                       []string // ids of failed test groups/cases
	output                         string
}

var h2specSummary = regexp.MustCompile(`(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed`)

// runH2Spec runs h2spec's generic, http2 and hpack sections, strict test
// cases included, against addr over TLS.
func runH2Spec(t *testing.T, bin, addr string) h2specResult {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	var out bytes.Buffer
	cmd := exec.Command(bin, "generic", "http2", "hpack", "--strict", "--tls", "--insecure", "-h", host, "-p", port, "-o", "3", "--max-header-length", "60000")
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // exits non-zero when a test fails: the summary says which
	res := h2specResult{output: out.String()}
	m := h2specSummary.FindStringSubmatch(res.output)
	if m == nil {
		t.Fatalf("h2spec printed no summary:\n%s", res.output)
	}
	for i, p := range []*int{&res.total, &res.passed, &res.skipped, &res.failed} {
		*p = atoi(m[i+1])
	}
	// The failures section after "Failures:" names each failed case with its
	// section path: lines that start with a section number and case lines
	// with "×".
	if i := strings.Index(res.output, "Failures:"); i >= 0 {
		section := ""
		for _, line := range strings.Split(res.output[i:], "\n") {
			l := strings.TrimSpace(line)
			switch {
			case regexp.MustCompile(`^(generic|http2)?/?[0-9.]+`).MatchString(l) && !strings.Contains(l, "×"):
				section = l
			case strings.Contains(l, "×"):
				res.failures = append(res.failures, section+" | "+l)
			}
		}
	}
	return res
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// h2specHandler answers every request with a small body after reading the
// request's, as h2spec expects of the resource it requests.
func h2specHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "hello")
	})
}

// TestH2Spec runs h2spec (generic, http2 and hpack sections with the strict
// cases, over TLS) against h2serve: every test must pass (146 in h2spec
// 2.2.1). Go's server is run too, for comparison in the log (with its default
// 1 MiB frames it fails 4: a 300 KB HEADERS frame is legal there, a SETTINGS
// frame repeating a parameter, which RFC 9113 allows, is a connection error,
// and requests with connection-specific or "te: gzip" headers are served). The header fields h2spec pads requests with are 60 000
// bytes, so that its "HEADERS frame larger than SETTINGS_MAX_FRAME_SIZE"
// exceeds our 256 KiB frames rather than the 16 KiB it assumes.
func TestH2Spec(t *testing.T) {
	bin := buildH2Spec(t)
	ours := serve(t, h2specHandler(), false, h2serve.Config{})
	res := runH2Spec(t, bin, ours.addr)
	t.Logf("h2serve: %d tests, %d passed, %d skipped, %d failed", res.total, res.passed, res.skipped, res.failed)
	if res.failed > 0 || res.passed != res.total || res.total < 146 {
		t.Errorf("h2spec against h2serve: %d failed, %d passed:\n%s", res.failed, res.passed, strings.Join(res.failures, "\n"))
		if os.Getenv("H2SPEC_VERBOSE") != "" {
			t.Log(res.output)
		}
	}
	goSrv := serve(t, h2specHandler(), true, h2serve.Config{})
	gres := runH2Spec(t, bin, goSrv.addr)
	t.Logf("Go's server: %d tests, %d passed, %d skipped, %d failed\n%s", gres.total, gres.passed, gres.skipped, gres.failed, strings.Join(gres.failures, "\n"))
}
