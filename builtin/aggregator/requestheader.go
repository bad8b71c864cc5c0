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
// The zero value with Roots set verifies the certificate on every request;
// NewRequestHeader remembers each connection's verdict (most clients' certificates
// are another CA's, and a failed chain search costs as much as a verified one).
type RequestHeader struct {
	Roots        *x509.CertPool
	AllowedNames []string

	verdicts *filters.CertMemo[frontProxyVerdict] // nil: no memory
}

// frontProxyVerdict is what verifying a client certificate against the
// front-proxy CA found: signed by it and valid until notAfter, or not.
type frontProxyVerdict struct {
	front    bool
	notAfter time.Time
}

// NewRequestHeader returns a RequestHeader that verifies each connection's
// client certificate once. Roots must not change afterwards.
func NewRequestHeader(roots *x509.CertPool, allowedNames []string) RequestHeader {
	return RequestHeader{Roots: roots, AllowedNames: allowedNames, verdicts: &filters.CertMemo[frontProxyVerdict]{}}
}

var _ filters.Authenticator = RequestHeader{}

// signedByFrontProxyCA reports whether the client certificate chain verifies
// against Roots for client authentication at now, from memory when this
// connection's certificate was verified before. A verdict that may change with
// time (valid until the chain's first expiry; refused as expired or not yet
// valid) is not remembered past it.
func (a RequestHeader) signedByFrontProxyCA(peer []*x509.Certificate, now time.Time) bool {
	leaf := peer[0]
	if v, ok := a.verdicts.Get(leaf); ok && (!v.front || !now.After(v.notAfter)) {
		return v.front
	}
	inter := x509.NewCertPool()
	for _, c := range peer[1:] {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: a.Roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now})
	if err != nil {
		var invalid x509.CertificateInvalidError
		if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
			a.verdicts.Put(leaf, frontProxyVerdict{})
		}
		return false
	}
	a.verdicts.Put(leaf, frontProxyVerdict{front: true, notAfter: filters.ChainExpiry(chains)})
	return true
}

// Authenticate implements filters.Authenticator.
func (a RequestHeader) Authenticate(r *http.Request) (*filters.User, bool, error) {
	if a.Roots == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	if !a.signedByFrontProxyCA(r.TLS.PeerCertificates, time.Now()) {
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
