package aggregator

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// The requestheader configuration kube-apiserver publishes (and its front
// proxy uses): header names and the front-proxy client's common name.
var (
	UsernameHeaders    = []string{"X-Remote-User"}
	UIDHeaders         = []string{"X-Remote-Uid"}
	GroupHeaders       = []string{"X-Remote-Group"}
	ExtraHeaderPrefix  = []string{"X-Remote-Extra-"}
	FrontProxyUserName = "front-proxy-client"
)

// RequestHeader authenticates requests from a front proxy, as
// kube-apiserver's requestheader authenticator does: a TLS client
// certificate signed by Roots (the front-proxy CA) whose common name is in
// AllowedNames (any, when empty) makes the X-Remote-* headers the user.
// Requests without such a certificate are not its to judge.
//
// The zero value verifies the certificate chain on every request;
// NewRequestHeader remembers, per connection, whether its certificate is
// the front proxy's (verifying every request's certificate against the
// front-proxy CA was a quarter of the CPU of `converge up` serving creates,
// for clients of the cluster CA that always fail it).
type RequestHeader struct {
	Roots        *x509.CertPool
	AllowedNames []string

	// fromProxy remembers whether a parsed certificate verified against
	// Roots; nil: no memory. Roots must not change once it is set.
	fromProxy *filters.CertMemo[bool]
}

var _ filters.Authenticator = RequestHeader{}

// NewRequestHeader returns a RequestHeader that remembers each connection's
// verification: a certificate signed by Roots until its chain expires, one
// another CA signed for as long as the connection lives (roots fixed, its
// answer cannot change).
func NewRequestHeader(roots *x509.CertPool, allowedNames []string) RequestHeader {
	return RequestHeader{Roots: roots, AllowedNames: allowedNames, fromProxy: &filters.CertMemo[bool]{}}
}

// verify reports whether leaf, with the intermediates of its connection,
// chains to a.Roots for client authentication.
func (a RequestHeader) verify(peer []*x509.Certificate) bool {
	leaf := peer[0]
	now := time.Now()
	if a.fromProxy != nil {
		if ok, known := a.fromProxy.Get(leaf, now); known {
			return ok
		}
	}
	inter := x509.NewCertPool()
	for _, c := range peer[1:] {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: a.Roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now})
	if a.fromProxy != nil {
		var unknown x509.UnknownAuthorityError
		switch {
		case err == nil:
			a.fromProxy.Put(leaf, true, filters.ChainExpiry(chains))
		case errors.As(err, &unknown):
			// Not signed by the front-proxy CA: nothing about time changes that.
			a.fromProxy.Put(leaf, false, leaf.NotAfter)
		}
	}
	return err == nil
}

// Authenticate implements filters.Authenticator.
func (a RequestHeader) Authenticate(r *http.Request) (*filters.User, bool, error) {
	if a.Roots == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	if !a.verify(r.TLS.PeerCertificates) {
		return nil, false, nil // another CA's client: the x509 authenticator's
	}
	if len(a.AllowedNames) > 0 && !slices.Contains(a.AllowedNames, leaf.Subject.CommonName) {
		return nil, false, fmt.Errorf("requestheader: client certificate common name %q is not allowed", leaf.Subject.CommonName)
	}
	name := r.Header.Get(UsernameHeaders[0])
	if name == "" {
		return nil, false, errors.New("requestheader: no X-Remote-User header")
	}
	u := &filters.User{Name: name, UID: r.Header.Get(UIDHeaders[0]), Groups: slices.Clone(r.Header.Values(GroupHeaders[0]))}
	for h, vs := range r.Header {
		key, ok := cutPrefixFold(h, ExtraHeaderPrefix[0])
		if !ok {
			continue
		}
		if k, err := url.PathUnescape(key); err == nil {
			key = k
		}
		key = strings.ToLower(key)
		if u.Extra == nil {
			u.Extra = map[string][]string{}
		}
		u.Extra[key] = append(u.Extra[key], vs...)
	}
	for h := range r.Header {
		if isRemoteHeader(h) {
			r.Header.Del(h)
		}
	}
	return u, true, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}
