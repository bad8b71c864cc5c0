package healthz

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Checker reports the health of one aspect: nil means healthy.
type Checker func(req *http.Request) error

// Ping always succeeds: the server is up.
func Ping(*http.Request) error { return nil }

// ErrDuplicate is returned by AddCheck for a name already in use.
var ErrDuplicate = errors.New("healthz: check already registered")

// Handler serves a set of named checks. The zero value is ready to use and
// safe for concurrent use.
type Handler struct {
	// Endpoint names the endpoint in the verbose summary ("readyz check
	// passed"); empty means "healthz".
	Endpoint string

	mu     sync.RWMutex
	checks map[string]Checker // guarded by mu
}

// AddCheck registers check under name.
func (h *Handler) AddCheck(name string, check Checker) error {
	if name == "" || slices.Contains(strings.Split(name, "/"), "") {
		return fmt.Errorf("healthz: invalid check name %q", name)
	}
	if check == nil {
		return fmt.Errorf("healthz: check %q is nil", name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.checks[name]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	if h.checks == nil {
		h.checks = map[string]Checker{}
	}
	h.checks[name] = check
	return nil
}

// ServeHTTP runs the checks; the last path element selects a single check when
// it names one.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h.mu.RLock()
	names := make([]string, 0, len(h.checks))
	for n := range h.checks {
		names = append(names, n)
	}
	checks := make(map[string]Checker, len(h.checks))
	for n, c := range h.checks {
		checks[n] = c
	}
	h.mu.RUnlock()
	slices.Sort(names)

	// /<endpoint>/<name>: one check; names may hold slashes, as Kubernetes'
	// poststarthook/<hook> checks do.
	if _, name, one := strings.Cut(strings.Trim(req.URL.Path, "/"), "/"); one {
		c, ok := checks[name]
		if !ok {
			http.NotFound(w, req)
			return
		}
		if err := c(req); err != nil {
			http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
			return
		}
		writeText(w, http.StatusOK, "ok")
		return
	}

	excluded := req.URL.Query()["exclude"]
	_, verbose := req.URL.Query()["verbose"]
	var b strings.Builder
	failed := false
	for _, n := range names {
		if slices.Contains(excluded, n) {
			fmt.Fprintf(&b, "[+]%s excluded: ok\n", n)
			continue
		}
		if err := checks[n](req); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: %v\n", n, err)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", n)
		}
	}
	endpoint := h.Endpoint
	if endpoint == "" {
		endpoint = "healthz"
	}
	switch {
	case failed:
		writeText(w, http.StatusInternalServerError, b.String()+endpoint+" check failed")
	case verbose:
		writeText(w, http.StatusOK, b.String()+endpoint+" check passed")
	default:
		writeText(w, http.StatusOK, "ok")
	}
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprint(w, body)
}
