package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Prefix is where the dashboard is served.
const Prefix = "/ui/"

const (
	// CookieName is the session cookie.
	CookieName = "converge_session"
	// CSRFHeader carries the session's CSRF token on every write.
	CSRFHeader = "X-CSRF-Token"
	// tokenPrefix marks the tokens this package issues.
	tokenPrefix = "converge-ui."
)

// Options configure New. The zero value of each field means its default.
type Options struct {
	// Authenticator identifies the callers of POST /ui/login/code (the API
	// server's own authenticator); nil means the server does not authenticate
	// (converge up --insecure): anyone may ask for a code and sessions carry
	// no credential.
	Authenticator filters.Authenticator
	// CodeTTL is how long a login code is valid (default 5 minutes).
	CodeTTL time.Duration
	// SessionTTL is how long a session and its issued token live (default 8 hours).
	SessionTTL time.Duration
	// Logger receives the dashboard's logs.
	Logger logr.Logger
}

// Dashboard serves /ui/ and authenticates the tokens it issued.
type Dashboard struct {
	opts Options
	now  func() time.Time

	metrics atomic.Pointer[prometheus.Gatherer] // the controller manager's, when in-process

	mu       sync.Mutex
	codes    map[string]grant    // one-time login code -> what its session gets
	sessions map[string]*session // session id (the cookie) -> session
	issued   map[string]*grant   // issued token -> identity (while its session lives)
}

// grant is a credential and the identity it stands for.
type grant struct {
	user    filters.User
	token   string // bearer token the proxy attaches ("" without authentication)
	issued  bool   // token was issued here (revoked with the session)
	expires time.Time
}

type session struct {
	grant
	csrf string
}

// New returns a dashboard; mount it with Wrap.
func New(opts Options) *Dashboard {
	if opts.CodeTTL <= 0 {
		opts.CodeTTL = 5 * time.Minute
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 8 * time.Hour
	}
	return &Dashboard{opts: opts, now: time.Now,
		codes: map[string]grant{}, sessions: map[string]*session{}, issued: map[string]*grant{}}
}

// Wrap returns a handler that serves the dashboard under /ui/ and passes every
// other request to api, the API server's handler (its filters included), which
// also serves the dashboard's proxied requests.
func (d *Dashboard) Wrap(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui/login", d.login)
	mux.HandleFunc("POST /ui/login/code", d.newCode)
	mux.HandleFunc("GET /ui/session", d.withSession(d.sessionInfo))
	mux.HandleFunc("POST /ui/logout", d.withSession(d.logout))
	mux.Handle("/ui/api/", d.withSession(func(w http.ResponseWriter, r *http.Request, s *session) {
		d.proxy(w, r, s, api)
	}))
	mux.HandleFunc("GET /ui/controllers", d.withSession(func(w http.ResponseWriter, r *http.Request, s *session) {
		d.controllers(w, r, s, api)
	}))
	mux.Handle("/ui/", assetHandler())
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ui" && !strings.HasPrefix(r.URL.Path, Prefix) {
			api.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		mux.ServeHTTP(w, r)
	})
}

// LoginCode returns a one-time login code for u (converge up prints a link
// with one for the admin): the session it opens carries a token issued here
// for u.
func (d *Dashboard) LoginCode(u filters.User) (string, error) {
	g := grant{user: u}
	if d.opts.Authenticator != nil {
		tok, err := randomString()
		if err != nil {
			return "", err
		}
		g.token, g.issued = tokenPrefix+tok, true
	}
	return d.addCode(g)
}

// TokenAuthenticator authenticates the tokens this dashboard issued, for the
// API server's authentication chain.
func (d *Dashboard) TokenAuthenticator() filters.TokenAuthenticator { return tokenAuth{d} }

type tokenAuth struct{ d *Dashboard }

// AuthenticateToken implements filters.TokenAuthenticator.
func (a tokenAuth) AuthenticateToken(_ context.Context, token string) (*filters.User, bool, error) {
	if !strings.HasPrefix(token, tokenPrefix) {
		return nil, false, nil
	}
	d := a.d
	d.mu.Lock()
	defer d.mu.Unlock()
	g, ok := d.issued[token]
	if !ok || !d.now().Before(g.expires) {
		return nil, false, errors.New("dashboard: session token expired or unknown")
	}
	u := g.user
	u.Groups = append([]string(nil), g.user.Groups...)
	return &u, true, nil
}

func (d *Dashboard) addCode(g grant) (string, error) {
	code, err := randomString()
	if err != nil {
		return "", err
	}
	g.expires = d.now().Add(d.opts.CodeTTL)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expireLocked()
	d.codes[code] = g
	return code, nil
}

// expireLocked forgets expired codes, sessions and tokens.
func (d *Dashboard) expireLocked() {
	now := d.now()
	for k, g := range d.codes {
		if !now.Before(g.expires) {
			delete(d.codes, k)
		}
	}
	for k, s := range d.sessions {
		if !now.Before(s.expires) {
			d.endLocked(k, s)
		}
	}
}

func (d *Dashboard) endLocked(id string, s *session) {
	delete(d.sessions, id)
	if s.issued {
		delete(d.issued, s.token)
	}
}

// newCode answers POST /ui/login/code: a code for the caller's identity, as
// the API server authenticates it.
func (d *Dashboard) newCode(w http.ResponseWriter, r *http.Request) {
	g := grant{user: filters.User{Name: filters.UserAnonymous}}
	if d.opts.Authenticator != nil {
		u, ok, err := d.opts.Authenticator.Authenticate(r)
		if !ok {
			if err != nil {
				d.opts.Logger.V(1).Info("Dashboard login refused", "error", err.Error())
			}
			writeStatus(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
			return
		}
		g.user = *u
		scheme, tok, found := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if found && strings.EqualFold(scheme, "bearer") && strings.TrimSpace(tok) != "" {
			g.token = strings.TrimSpace(tok)
		} else {
			t, err := randomString()
			if err != nil {
				writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
				return
			}
			g.token, g.issued = tokenPrefix+t, true
		}
	}
	code, err := d.addCode(g)
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "path": Prefix + "login?code=" + code, "user": g.user.Name})
}

// login exchanges a one-time code for a session cookie and sends the browser
// on to the dashboard, so the code leaves the address bar.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	d.mu.Lock()
	d.expireLocked()
	g, ok := d.codes[code]
	delete(d.codes, code)
	d.mu.Unlock()
	if code == "" || !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(loginRefused))
		return
	}
	id, err1 := randomString()
	csrf, err2 := randomString()
	if err := errors.Join(err1, err2); err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	s := &session{grant: g, csrf: csrf}
	s.expires = d.now().Add(d.opts.SessionTTL)
	d.mu.Lock()
	d.sessions[id] = s
	if s.issued {
		d.issued[s.token] = &s.grant
	}
	d.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: id, Path: Prefix, Expires: s.expires,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

const loginRefused = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Converge: login link refused</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/ui/assets/app.css"></head>
<body><main class="login"><h1>This login link is not valid</h1>
<p>Login links work once and expire after a few minutes. Run <code>converge dashboard</code> for a new one.</p></main></body></html>`

// withSession runs h with the request's session, or answers 401; writes also
// need the session's CSRF token.
func (d *Dashboard) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		c, err := r.Cookie(CookieName)
		var s *session
		if err == nil {
			d.mu.Lock()
			if cur, ok := d.sessions[c.Value]; ok {
				if d.now().Before(cur.expires) {
					s = cur
				} else {
					d.endLocked(c.Value, cur)
				}
			}
			d.mu.Unlock()
		}
		if s == nil {
			writeStatus(w, http.StatusUnauthorized, "Unauthorized", "no dashboard session: run `converge dashboard` to log in")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			got := r.Header.Get(CSRFHeader)
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
				writeStatus(w, http.StatusForbidden, "Forbidden", "missing or wrong CSRF token ("+CSRFHeader+")")
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), sessionIDKey{}, c.Value)), s)
	}
}

type sessionIDKey struct{}

func (d *Dashboard) sessionInfo(w http.ResponseWriter, _ *http.Request, s *session) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"user": s.user.Name, "groups": s.user.Groups, "csrfToken": s.csrf,
		"expires": s.expires.UTC().Format(time.RFC3339)})
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, s *session) {
	id, _ := r.Context().Value(sessionIDKey{}).(string)
	d.mu.Lock()
	if cur, ok := d.sessions[id]; ok && cur == s {
		d.endLocked(id, s)
	}
	d.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, MaxAge: -1,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// forwarded are the request headers the proxy passes on; everything else
// (cookies, credentials, impersonation) stays behind.
var forwarded = []string{"Accept", "Content-Type", "Content-Length"}

// proxy serves /ui/api/PATH as the API server's PATH with the session's
// credential.
func (d *Dashboard) proxy(w http.ResponseWriter, r *http.Request, s *session, api http.Handler) {
	out := asUser(r, s, r.Method, strings.TrimPrefix(r.URL.Path, "/ui/api"), r.Body)
	out.URL.RawQuery = r.URL.RawQuery
	out.RequestURI = out.URL.RequestURI()
	out.ContentLength = r.ContentLength
	for _, k := range forwarded {
		if v := r.Header.Values(k); len(v) > 0 {
			out.Header[k] = v
		}
	}
	api.ServeHTTP(w, out)
}

// asUser is a request to the API server's path made for the browser's request
// r with the session's credential alone.
func asUser(r *http.Request, s *session, method, path string, body io.Reader) *http.Request {
	out := r.Clone(r.Context())
	out.Method = method
	out.URL.Path, out.URL.RawPath, out.URL.RawQuery = path, "", ""
	out.RequestURI = out.URL.RequestURI()
	out.Body = io.NopCloser(body)
	out.ContentLength = -1
	out.Header = http.Header{"User-Agent": {"converge-dashboard"}}
	if s.token != "" {
		out.Header.Set("Authorization", "Bearer "+s.token)
	}
	if r.TLS != nil {
		// The browser's own TLS identity (if any) is not the session's.
		st := *r.TLS
		st.PeerCertificates, st.VerifiedChains = nil, nil
		out.TLS = &st
	}
	return out
}

func randomString() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// writeStatus answers with a Kubernetes Status, as the API server does.
func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": reason, "code": code})
}
