package controlplane_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/controlplane"
)

// TestReadyzWaitsForAPIServices: /readyz names the APIService loop's checks
// as kube-apiserver does (poststarthook/apiservice-registration-controller,
// autoregister-completion), and once it answers ok the local APIServices of
// the served group versions exist, Available.
func TestReadyzWaitsForAPIServices(t *testing.T) {
	ctx := t.Context()
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: t.TempDir(), NoFsync: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(cp.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, body := get("/readyz")
		if code == http.StatusOK {
			break
		}
		if code != http.StatusInternalServerError || !strings.Contains(body, "readyz check failed") {
			t.Fatalf("/readyz: %d %q, want 500 naming the failed check until ready", code, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not ready after 20s: %s", body)
		}
	}
	// Ready: the APIServices are there, without waiting any longer.
	for _, name := range []string{"v1.", "v1.apps", "v1.apiregistration.k8s.io", "v1.apiextensions.k8s.io"} {
		code, body := get("/apis/apiregistration.k8s.io/v1/apiservices/" + name)
		if code != http.StatusOK || !strings.Contains(body, `"reason":"Local","status":"True","type":"Available"`) {
			t.Errorf("apiservice %s right after /readyz ok: %d %s", name, code, body)
		}
	}
	code, body := get("/readyz?verbose")
	for _, line := range []string{"[+]ping ok", "[+]poststarthook/apiservice-registration-controller ok", "[+]autoregister-completion ok", "readyz check passed"} {
		if code != http.StatusOK || !strings.Contains(body, line) {
			t.Errorf("/readyz?verbose: %d %q, want a line %q", code, body, line)
		}
	}
	for path, want := range map[string]int{
		"/readyz/poststarthook/apiservice-registration-controller": http.StatusOK,
		"/readyz/autoregister-completion":                          http.StatusOK,
		"/readyz/ping":                                             http.StatusOK,
		"/readyz/nothing":                                          http.StatusNotFound,
	} {
		if code, body := get(path); code != want {
			t.Errorf("%s: %d %q, want %d", path, code, body, want)
		}
	}
}
