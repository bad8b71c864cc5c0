package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// echoAPI stands in for the API server's handler: it answers with the path
// and the headers it was given.
var echoAPI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "query": r.URL.RawQuery, "header": r.Header})
})

// bearerUsers authenticates "Bearer alice-token" as alice.
var bearerUsers = filters.AuthenticatorFunc(func(r *http.Request) (*filters.User, bool, error) {
	if r.Header.Get("Authorization") == "Bearer alice-token" {
		return &filters.User{Name: "alice", Groups: []string{"dev"}}, true, nil
	}
	if r.Header.Get("X-Test-Cert") == "bob" { // stands for a verified client certificate
		return &filters.User{Name: "bob", Groups: []string{"ops"}}, true, nil
	}
	return nil, false, nil
})

type browser struct {
	t      *testing.T
	h      http.Handler
	cookie *http.Cookie
	csrf   string
}

func (b *browser) do(method, target string, body string, hdr ...string) *httptest.ResponseRecorder {
	b.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	if b.cookie != nil {
		r.AddCookie(b.cookie)
	}
	w := httptest.NewRecorder()
	b.h.ServeHTTP(w, r)
	return w
}

// login asks for a code with hdr (the CLI's credentials) and exchanges it.
func (b *browser) login(hdr ...string) {
	b.t.Helper()
	w := b.do(http.MethodPost, "/ui/login/code", "", hdr...)
	if w.Code != http.StatusOK {
		b.t.Fatalf("login code: %d %s", w.Code, w.Body)
	}
	var got struct{ Path, User string }
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		b.t.Fatal(err)
	}
	b.exchange(got.Path)
}

func (b *browser) exchange(path string) {
	b.t.Helper()
	w := b.do(http.MethodGet, path, "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/" {
		b.t.Fatalf("exchange: %d %v", w.Code, w.Header())
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 {
		b.t.Fatalf("want one cookie, got %v", cs)
	}
	c := cs[0]
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" {
		b.t.Fatalf("session cookie must be Secure, HttpOnly, SameSite=Strict, Path=/ui/: %+v", c)
	}
	b.cookie = c
	w = b.do(http.MethodGet, "/ui/session", "")
	var s struct{ CSRFToken string }
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || s.CSRFToken == "" {
		b.t.Fatalf("session: %d %s", w.Code, w.Body)
	}
	b.csrf = s.CSRFToken
}

func proxied(t *testing.T, w *httptest.ResponseRecorder) (path string, h http.Header) {
	t.Helper()
	var got struct {
		Path   string
		Header http.Header
	}
	if w.Code != http.StatusOK {
		t.Fatalf("proxy: %d %s", w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return got.Path, got.Header
}

func TestBearerUserBrowsesWithOwnToken(t *testing.T) {
	t.Parallel()
	d := New(Options{Authenticator: bearerUsers})
	b := &browser{t: t, h: d.Wrap(echoAPI)}
	b.login("Authorization", "Bearer alice-token")
	path, h := proxied(t, b.do(http.MethodGet, "/ui/api/api/v1/pods?watch=1", "",
		"Accept", "application/json", "Impersonate-User", "root", "Authorization", "Bearer other"))
	if path != "/api/v1/pods" {
		t.Errorf("proxied path %q", path)
	}
	if h.Get("Authorization") != "Bearer alice-token" || h.Get("Impersonate-User") != "" || h.Get("Cookie") != "" {
		t.Errorf("proxied headers carry only the session's credential: %v", h)
	}
}

func TestCertificateUserGetsIssuedToken(t *testing.T) {
	t.Parallel()
	d := New(Options{Authenticator: bearerUsers})
	b := &browser{t: t, h: d.Wrap(echoAPI)}
	b.login("X-Test-Cert", "bob")
	_, h := proxied(t, b.do(http.MethodGet, "/ui/api/api/v1/pods", ""))
	tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok {
		t.Fatalf("no bearer token: %v", h)
	}
	u, ok, err := d.TokenAuthenticator().AuthenticateToken(context.Background(), tok)
	if !ok || err != nil || u.Name != "bob" || len(u.Groups) != 1 || u.Groups[0] != "ops" {
		t.Fatalf("issued token authenticates as %+v %v %v", u, ok, err)
	}
	// Logging out revokes it.
	if w := b.do(http.MethodPost, "/ui/logout", "", CSRFHeader, b.csrf); w.Code != http.StatusNoContent {
		t.Fatalf("logout: %d %s", w.Code, w.Body)
	}
	if _, ok, _ := d.TokenAuthenticator().AuthenticateToken(context.Background(), tok); ok {
		t.Error("the token outlived its session")
	}
	if w := b.do(http.MethodGet, "/ui/api/api/v1/pods", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("after logout: %d", w.Code)
	}
}

func TestLoginCodeWorksOnceAndExpires(t *testing.T) {
	t.Parallel()
	d := New(Options{Authenticator: bearerUsers, CodeTTL: time.Minute})
	now := time.Now()
	d.now = func() time.Time { return now }
	h := d.Wrap(echoAPI)
	code, err := d.LoginCode(filters.User{Name: "admin", Groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, h: h}
	b.exchange("/ui/login?code=" + url.QueryEscape(code))
	if w := (&browser{t: t, h: h}).do(http.MethodGet, "/ui/login?code="+url.QueryEscape(code), ""); w.Code != http.StatusUnauthorized {
		t.Errorf("second use of a code: %d", w.Code)
	}
	late, _ := d.LoginCode(filters.User{Name: "admin"})
	now = now.Add(2 * time.Minute)
	if w := (&browser{t: t, h: h}).do(http.MethodGet, "/ui/login?code="+url.QueryEscape(late), ""); w.Code != http.StatusUnauthorized {
		t.Errorf("expired code: %d", w.Code)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	d := New(Options{Authenticator: bearerUsers})
	h := d.Wrap(echoAPI)
	anon := &browser{t: t, h: h}
	if w := anon.do(http.MethodPost, "/ui/login/code", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("code without credentials: %d", w.Code)
	}
	if w := anon.do(http.MethodGet, "/ui/api/api/v1/pods", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("proxy without session: %d", w.Code)
	}
	b := &browser{t: t, h: h}
	b.login("Authorization", "Bearer alice-token")
	for _, tc := range []struct{ name, csrf string }{{"no token", ""}, {"wrong token", "x" + b.csrf}} {
		w := b.do(http.MethodPost, "/ui/api/api/v1/namespaces/default/configmaps", "{}", CSRFHeader, tc.csrf)
		if w.Code != http.StatusForbidden {
			t.Errorf("%s: write answered %d", tc.name, w.Code)
		}
	}
	if _, hdr := proxied(t, b.do(http.MethodPost, "/ui/api/api/v1/namespaces/default/configmaps", "{}", CSRFHeader, b.csrf)); hdr.Get("Authorization") == "" {
		t.Error("write with the CSRF token was not proxied with the credential")
	}
	// Requests outside /ui/ reach the API server untouched.
	w := anon.do(http.MethodGet, "/api/v1/pods", "", "Authorization", "Bearer x")
	if path, hdr := proxied(t, w); path != "/api/v1/pods" || hdr.Get("Authorization") != "Bearer x" {
		t.Errorf("API request changed: %s %v", path, hdr)
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	h := New(Options{}).Wrap(echoAPI)
	for path, want := range map[string]string{
		"/ui/":               `<script type="module" src="/ui/assets/app.js">`,
		"/ui/assets/app.js":  "import",
		"/ui/assets/app.css": ":root",
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Body)
		if w.Code != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, want %q in the body", path, w.Code, want)
		}
		if w.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", path)
		}
	}
}

func TestControllerStats(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total"}, []string{"controller", "result"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_errors_total"}, []string{"controller"})
	workers := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "controller_runtime_active_workers"}, []string{"controller"})
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "apiserver_request_total"})
	reg.MustRegister(total, errs, workers, other)
	total.WithLabelValues("deployment", "success").Add(5)
	total.WithLabelValues("deployment", "error").Add(2)
	total.WithLabelValues("job", "success").Add(1)
	errs.WithLabelValues("deployment").Add(2)
	workers.WithLabelValues("job").Set(1)
	other.Inc()
	got, err := controllerStats(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := []ControllerStats{{Name: "deployment", Reconciles: 7, Errors: 2}, {Name: "job", Reconciles: 1, ActiveWorkers: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
}
