package nodeauth

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/api"
)

// CacheTTL is how long a token's identity and an authorization answer are
// reused.
const CacheTTL = 10 * time.Second

// CreateFunc creates a TokenReview or SubjectAccessReview and fills in its
// status (the agent's API client's Create).
type CreateFunc func(ctx context.Context, obj api.Object) error

// Authorizer wraps the node agent's handler. Create it with New.
type Authorizer struct {
	c    CreateFunc
	node string
	log  logr.Logger
	now  func() time.Time

	mu    sync.Mutex
	cache map[string]entry // "token:<token>" or "sar:<user>|<groups>|<verb>|<sub>"
}

type entry struct {
	user    user
	allowed bool
	expires time.Time
}

type user struct {
	name   string
	uid    string
	groups []string
	extra  map[string][]string
}

// New returns an authorizer of requests to node's port that asks the API
// server through c.
func New(c CreateFunc, node string, log logr.Logger) *Authorizer {
	return &Authorizer{c: c, node: node, log: log, now: time.Now, cache: map[string]entry{}}
}

// Wrap returns next behind authentication and authorization.
func (a *Authorizer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			next.ServeHTTP(w, r)
			return
		}
		u, ok, err := a.authenticate(r)
		switch {
		case err != nil:
			a.log.V(1).Info("Authentication failed", "error", err.Error())
			http.Error(w, "authentication failed", http.StatusInternalServerError)
			return
		case !ok:
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if u.name == pki.NodeClientUser || slices.Contains(u.groups, pki.AdminGroup) {
			next.ServeHTTP(w, r)
			return
		}
		verb, sub := attributes(r)
		allowed, err := a.authorize(r.Context(), u, verb, sub)
		if err != nil {
			a.log.V(1).Info("Authorization failed", "user", u.name, "error", err.Error())
			http.Error(w, "authorization failed", http.StatusInternalServerError)
			return
		}
		if !allowed {
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource=%s)", u.name, verb, sub), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// attributes maps a request to the verb and nodes subresource the kubelet
// checks.
func attributes(r *http.Request) (verb, subresource string) {
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	default:
		verb = "get"
	}
	switch p := r.URL.Path; {
	case p == "/metrics" || strings.HasPrefix(p, "/metrics/"):
		return verb, "metrics"
	case p == "/stats" || strings.HasPrefix(p, "/stats/"):
		return verb, "stats"
	default:
		return verb, "proxy"
	}
}

func (a *Authorizer) authenticate(r *http.Request) (user, bool, error) {
	if certs := r.TLS.PeerCertificates; len(certs) > 0 {
		return user{name: certs[0].Subject.CommonName, groups: certs[0].Subject.Organization}, true, nil
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return user{}, false, nil
	}
	key := "token:" + token
	if e, ok := a.cached(key); ok {
		return e.user, e.allowed, nil
	}
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := a.c(r.Context(), tr); err != nil {
		return user{}, false, fmt.Errorf("create tokenreview: %w", err)
	}
	u := user{name: tr.Status.User.Username, uid: tr.Status.User.UID, groups: tr.Status.User.Groups, extra: tr.Status.User.Extra}
	a.store(key, entry{user: u, allowed: tr.Status.Authenticated})
	return u, tr.Status.Authenticated, nil
}

func (a *Authorizer) authorize(ctx context.Context, u user, verb, sub string) (bool, error) {
	key := "sar:" + u.name + "|" + u.uid + "|" + strings.Join(u.groups, ",") + "|" + verb + "|" + sub
	if len(u.extra) > 0 {
		key += fmt.Sprint(u.extra)
	}
	if e, ok := a.cached(key); ok {
		return e.allowed, nil
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.name, UID: u.uid, Groups: u.groups, Extra: u.extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "nodes", Subresource: sub, Name: a.node},
	}}
	if err := a.c(ctx, sar); err != nil {
		return false, fmt.Errorf("create subjectaccessreview: %w", err)
	}
	a.store(key, entry{allowed: sar.Status.Allowed})
	return sar.Status.Allowed, nil
}

func (a *Authorizer) cached(key string) (entry, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.cache[key]
	if !ok || a.now().After(e.expires) {
		return entry{}, false
	}
	return e, true
}

func (a *Authorizer) store(key string, e entry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	e.expires = now.Add(CacheTTL)
	if len(a.cache) > 4096 {
		for k, old := range a.cache {
			if now.After(old.expires) {
				delete(a.cache, k)
			}
		}
	}
	a.cache[key] = e
}
