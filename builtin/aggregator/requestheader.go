package aggregator

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

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
type RequestHeader struct {
	Roots        *x509.CertPool
	AllowedNames []string
}

var _ filters.Authenticator = RequestHeader{}

// Authenticate implements filters.Authenticator.
func (a RequestHeader) Authenticate(r *http.Request) (*filters.User, bool, error) {
	if a.Roots == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.Roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
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
