package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kubeconfigpkg "github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/internal/e2etool"
)

// syncBuffer is a bytes.Buffer safe for the command's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort is a loopback port below the ephemeral range (e2etool.FreePort):
// one from ":0" can be taken by some outgoing connection before the server
// binds it.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := e2etool.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startUp starts `converge up` in-process and waits for the ready line.
func startUp(t *testing.T, dataDir string, port int) (stop func() (int, time.Duration), out *syncBuffer) {
	t.Helper()
	return startServer(t, "up", dataDir, port)
}

// startServer starts `converge up` or `converge apiserver` with extra flags
// in-process and waits for the ready line.
func startServer(t *testing.T, command, dataDir string, port int, extra ...string) (stop func() (int, time.Duration), out *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out = &syncBuffer{}
	errOut := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, append([]string{command, "--data-dir", dataDir, "--port", strconv.Itoa(port)}, extra...), out, errOut)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "is ready at") {
		select {
		case code := <-done:
			t.Fatalf("converge %s exited early with %d:\n%s\n%s", command, code, out, errOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("converge %s not ready after 20s:\n%s\n%s", command, out, errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() (int, time.Duration) {
		t0 := time.Now()
		cancel()
		select {
		case code := <-done:
			return code, time.Since(t0)
		case <-time.After(15 * time.Second):
			t.Fatalf("converge %s did not stop within 15s", command)
			return -1, 0
		}
	}, out
}

func TestUpServesWritesKubeconfigAndStopsCleanly(t *testing.T) {
	dataDir := t.TempDir()
	port := freePort(t)
	stop, out := startUp(t, dataDir, port)
	kubeconfig := filepath.Join(dataDir, "kubeconfig")
	if !strings.Contains(out.String(), "export KUBECONFIG="+kubeconfig) {
		t.Errorf("output lacks the export line:\n%s", out)
	}
	for _, step := range []string{"store", "apiserver"} {
		if !strings.Contains(out.String(), step) {
			t.Errorf("output lacks the %q step:\n%s", step, out)
		}
	}
	kc, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	if !strings.Contains(string(kc), "server: "+url) {
		t.Errorf("kubeconfig does not point at %s:\n%s", url, kc)
	}
	// Anonymous requests are refused: secure is the default.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // only the status code matters
	if resp, err := anon.Get(url + "/api/v1/namespaces"); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous request: %d, want 401", resp.StatusCode)
	}
	// The dashboard's one-time login link becomes a session cookie.
	if !strings.Contains(out.String(), "Dashboard: "+url+"/ui/") {
		t.Errorf("output lacks the dashboard's address:\n%s", out)
	}
	_, link, _ := strings.Cut(out.String(), "converge dashboard): ")
	link, _, _ = strings.Cut(link, "\n")
	noRedirect := &http.Client{Transport: anon.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if !strings.HasPrefix(link, url+"/ui/login?code=") {
		t.Errorf("no dashboard login link in the output:\n%s", out)
	} else if resp, err := noRedirect.Get(link); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Errorf("dashboard login link: %d %v, want 303 and a session cookie", resp.StatusCode, resp.Cookies())
	}
	// Create an object with the kubeconfig's credentials, restart, and read it back.
	cfg, _, err := kubeconfigpkg.LoadKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rest.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/default/configmaps",
		Body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"survivor"},"data":{"a":"b"}}`)}); err != nil {
		t.Fatalf("create: %v", err)
	}
	code, took := stop()
	if code != 0 {
		t.Fatalf("exit code %d:\n%s", code, out)
	}
	if took > 5*time.Second {
		t.Errorf("shutdown took %s, want a few seconds at most", took)
	}
	stop2, _ := startUp(t, dataDir, port)
	defer stop2()
	c.CloseIdleConnections()
	if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/api/v1/namespaces/default/configmaps/survivor"}); err != nil {
		t.Fatalf("after restart (same CA and admin certificate): %v", err)
	}
}

func TestUpRefusesABusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out, errOut bytes.Buffer
	code := Execute(t.Context(), []string{"up", "--data-dir", t.TempDir(), "--port", strconv.Itoa(l.Addr().(*net.TCPAddr).Port)}, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "--port") {
		t.Errorf("error does not say what to do:\n%s", errOut.String())
	}
}

func TestVersionJSON(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := Execute(t.Context(), []string{"version", "-o", "json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var v map[string]string
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v["goVersion"] == "" {
		t.Fatalf("bad JSON %q: %v", out.String(), err)
	}
	if code := Execute(t.Context(), []string{"version", "-o", "xml"}, &out, &errOut); code != 1 {
		t.Fatalf("bad format accepted")
	}
}
