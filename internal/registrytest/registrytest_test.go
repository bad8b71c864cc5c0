package registrytest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/converge-dev/converge/internal/registrytest"
)

// TestStart: an open registry answers /v2/ with 200, a protected one with 401
// without credentials and 200 with them; Stop ends it.
func TestStart(t *testing.T) {
	open := registrytest.Start(t, registrytest.Options{})
	if code := get(t, open.Host, "", ""); code != http.StatusOK {
		t.Errorf("open registry: GET /v2/ = %d", code)
	}
	auth := registrytest.Start(t, registrytest.Options{Username: "alice", Password: "s3cret"})
	for _, c := range []struct {
		user, pass string
		want       int
	}{{"", "", 401}, {"alice", "wrong", 401}, {"alice", "s3cret", 200}} {
		if code := get(t, auth.Host, c.user, c.pass); code != c.want {
			t.Errorf("protected registry as %q/%q: GET /v2/ = %d, want %d", c.user, c.pass, code, c.want)
		}
	}
	tok := registrytest.Start(t, registrytest.Options{Username: "alice", Password: "s3cret", Token: true})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+tok.Host+"/v2/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.HasPrefix(ch, "Bearer realm=") {
		t.Errorf("token registry: GET /v2/ = %d %q, want 401 with a Bearer challenge", resp.StatusCode, ch)
	}
	open.Stop()
	if _, err := http.Get("http://" + open.Host + "/v2/"); err == nil {
		t.Error("registry still answers after Stop")
	}
}

func get(t *testing.T, host, user, pass string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/v2/", nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
