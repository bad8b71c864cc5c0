package filters

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// Authenticator identifies the user of a request. ok is false when the request
// carries no credentials this authenticator understands; err reports credentials
// it understands but rejects (an unknown token, an untrusted certificate).
type Authenticator interface {
	Authenticate(r *http.Request) (u *User, ok bool, err error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (*User, bool, error)

// Authenticate implements Authenticator.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*User, bool, error) { return f(r) }

var _ Authenticator = AuthenticatorFunc(nil)

// Union tries each authenticator in order; the first that accepts the request
// wins. Errors are returned only when none accepts it.
func Union(auths ...Authenticator) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*User, bool, error) {
		var errs []error
		for _, a := range auths {
			if a == nil {
				continue
			}
			u, ok, err := a.Authenticate(r)
			if ok {
				return u, true, nil
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		return nil, false, errors.Join(errs...)
	})
}

// X509 authenticates TLS client certificates signed by Roots: the subject's
// common name is the user, its organizations the groups. The zero value
// verifies the certificate chain on every request; NewX509 remembers verified
// certificates.
type X509 struct {
	Roots *x509.CertPool

	verified *verifiedCerts // nil: no memory
}

// NewX509 returns an X509 authenticator that verifies each client certificate
// once and then answers from memory until the verified chain's first expiry.
// A connection's requests share one parsed certificate, so the memory is found
// by pointer, without hashing, and held weakly: it is forgotten when the
// connection (its parsed certificate) is gone. Roots must not change
// afterwards.
func NewX509(roots *x509.CertPool) X509 {
	return X509{Roots: roots, verified: &verifiedCerts{}}
}

// Authenticate implements Authenticator.
func (a X509) Authenticate(r *http.Request) (*User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	now := time.Now()
	if u, ok := a.verified.get(leaf, now); ok {
		return u, true, nil
	}
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{
		Roots: a.Roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now,
	})
	if err != nil {
		return nil, false, fmt.Errorf("verify client certificate: %w", err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, errors.New("client certificate has no common name")
	}
	u := &User{Name: leaf.Subject.CommonName, Groups: slices.Clone(leaf.Subject.Organization)}
	a.verified.put(leaf, u, ChainExpiry(chains))
	return u, true, nil
}

// ChainExpiry is the earliest NotAfter of the certificates of the verified
// chain that expires last (Verify accepts a certificate while any chain holds).
func ChainExpiry(chains [][]*x509.Certificate) time.Time {
	var best time.Time
	for _, chain := range chains {
		end := chain[0].NotAfter
		for _, c := range chain[1:] {
			if c.NotAfter.Before(end) {
				end = c.NotAfter
			}
		}
		if end.After(best) {
			best = end
		}
	}
	return best
}

// verifiedCerts remembers the users of verified client certificates, for as
// long as each parsed certificate lives.
type verifiedCerts struct {
	memo CertMemo[verifiedCert]
}

type verifiedCert struct {
	name   string
	groups []string
}

// get returns a fresh User for leaf when it was verified and its chain is
// still valid at now.
func (v *verifiedCerts) get(leaf *x509.Certificate, now time.Time) (*User, bool) {
	if v == nil {
		return nil, false
	}
	c, ok := v.memo.Get(leaf, now)
	if !ok {
		return nil, false
	}
	// One spare slot: authentication appends system:authenticated.
	groups := make([]string, len(c.groups), len(c.groups)+1)
	copy(groups, c.groups)
	return &User{Name: c.name, Groups: groups}, true
}

func (v *verifiedCerts) put(leaf *x509.Certificate, u *User, notAfter time.Time) {
	if v != nil {
		v.memo.Put(leaf, verifiedCert{name: u.Name, groups: slices.Clone(u.Groups)}, notAfter)
	}
}

// count is the number of certificates remembered (for tests).
func (v *verifiedCerts) count() int { return v.memo.Len() }

// CertMemo remembers a value per parsed TLS peer certificate (the leaf of
// r.TLS.PeerCertificates) until a time, so that an authenticator verifies a
// connection's certificate chain once instead of on every request. A
// connection's requests share one parsed certificate, so the memory is found
// by pointer, without hashing, and held weakly: it is forgotten when the
// connection (its parsed certificate) is gone. The zero value is ready to use.
type CertMemo[V any] struct {
	certs sync.Map // weak.Pointer[x509.Certificate] → certMemoEntry[V]
}

type certMemoEntry[V any] struct {
	v     V
	until time.Time
}

// Get returns the value remembered for leaf if now is not after its time.
func (m *CertMemo[V]) Get(leaf *x509.Certificate, now time.Time) (V, bool) {
	var zero V
	e, ok := m.certs.Load(weak.Make(leaf))
	if !ok {
		return zero, false
	}
	c := e.(certMemoEntry[V])
	if now.After(c.until) {
		return zero, false
	}
	return c.v, true
}

// Put remembers v for leaf until the given time.
func (m *CertMemo[V]) Put(leaf *x509.Certificate, v V, until time.Time) {
	key := weak.Make(leaf)
	_, loaded := m.certs.Swap(key, certMemoEntry[V]{v: v, until: until})
	if !loaded {
		runtime.AddCleanup(leaf, func(k weak.Pointer[x509.Certificate]) { m.certs.Delete(k) }, key)
	}
}

// Len is the number of certificates remembered.
func (m *CertMemo[V]) Len() int {
	n := 0
	m.certs.Range(func(any, any) bool { n++; return true })
	return n
}

// TokenAuthenticator identifies the user of a bearer token.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u *User, ok bool, err error)
}

// BearerToken authenticates "Authorization: Bearer <token>" with the token
// authenticators in order.
func BearerToken(tokens ...TokenAuthenticator) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*User, bool, error) {
		h := r.Header.Get("Authorization")
		scheme, token, found := strings.Cut(strings.TrimSpace(h), " ")
		if !found || !strings.EqualFold(scheme, "bearer") {
			return nil, false, nil
		}
		token = strings.TrimSpace(token)
		if token == "" {
			return nil, false, nil
		}
		var errs []error
		for _, t := range tokens {
			u, ok, err := t.AuthenticateToken(r.Context(), token)
			if ok {
				return u, true, nil
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			errs = append(errs, errors.New("invalid bearer token"))
		}
		return nil, false, errors.Join(errs...)
	})
}

// StaticTokens authenticates tokens from a fixed table (Kubernetes'
// --token-auth-file).
type StaticTokens struct {
	tokens map[string]*User
}

// ParseTokenCSV reads Kubernetes' token file format: one
// `token,user,uid[,"group1,group2,..."]` record per line; blank lines and lines
// starting with # are skipped.
func ParseTokenCSV(r io.Reader) (*StaticTokens, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	st := &StaticTokens{tokens: map[string]*User{}}
	line := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file: record %d: want at least 3 fields (token,user,uid), got %d", line, len(rec))
		}
		token := strings.TrimSpace(rec[0])
		if token == "" {
			return nil, fmt.Errorf("token file: record %d: empty token", line)
		}
		if _, dup := st.tokens[token]; dup {
			return nil, fmt.Errorf("token file: record %d: duplicate token", line)
		}
		u := &User{Name: strings.TrimSpace(rec[1]), UID: strings.TrimSpace(rec[2])}
		if len(rec) > 3 {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		st.tokens[token] = u
	}
	return st, nil
}

// LoadTokenFile reads a token file (see ParseTokenCSV).
func LoadTokenFile(path string) (*StaticTokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	return ParseTokenCSV(f)
}

// AuthenticateToken implements TokenAuthenticator.
func (s *StaticTokens) AuthenticateToken(_ context.Context, token string) (*User, bool, error) {
	for t, u := range s.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			c := *u
			c.Groups = slices.Clone(u.Groups)
			return &c, true, nil
		}
	}
	return nil, false, nil
}

// DefaultPublicPaths are served to unauthenticated requests (as system:anonymous).
var DefaultPublicPaths = []string{"/healthz", "/livez", "/readyz", "/version"}

// AuthenticationOptions configure WithAuthentication.
type AuthenticationOptions struct {
	// PublicPaths (and their sub-paths) are served without credentials as
	// system:anonymous; nil means DefaultPublicPaths.
	PublicPaths []string
	// OnFailure is told why a request was refused (for logging); may be nil.
	OnFailure func(r *http.Request, err error)
}

func isPublic(path string, public []string) bool {
	for _, p := range public {
		if path == p || path == p+"/" || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// WithAuthentication authenticates every request with auth, adds
// system:authenticated to the user's groups and stores the user in the context.
// Requests without valid credentials get 401 unless their path is public.
func WithAuthentication(next http.Handler, auth Authenticator, opts AuthenticationOptions) http.Handler {
	public := opts.PublicPaths
	if public == nil {
		public = DefaultPublicPaths
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := UserFrom(r.Context()); ok {
			next.ServeHTTP(w, r)
			return
		}
		u, ok, err := auth.Authenticate(r)
		if !ok {
			if isPublic(r.URL.Path, public) {
				u = &User{Name: UserAnonymous, Groups: []string{GroupUnauthenticated}}
			} else {
				if opts.OnFailure != nil {
					opts.OnFailure(r, err)
				}
				WriteStatus(w, apierrors.NewUnauthorized("Unauthorized"))
				return
			}
		} else {
			r.Header.Del("Authorization")
			if !slices.Contains(u.Groups, GroupAuthenticated) && u.Name != UserAnonymous {
				u.Groups = append(u.Groups, GroupAuthenticated)
			}
		}
		recordUser(r.Context(), u)
		next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	})
}
