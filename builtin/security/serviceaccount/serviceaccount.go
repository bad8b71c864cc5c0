// Package serviceaccount issues and authenticates ServiceAccount tokens: ES256
// JWTs carrying Kubernetes' claims (iss, sub system:serviceaccount:NS:NAME, aud,
// exp, iat, nbf and kubernetes.io {namespace, serviceaccount {name, uid}}). The
// Authenticator checks the signature, issuer, audience, time window and that the
// ServiceAccount still exists with the same UID, and yields the ServiceAccount's
// user (groups system:serviceaccounts, system:serviceaccounts:NS,
// system:authenticated). TokenRequest serves the serviceaccounts/token
// subresource (kubectl create token).
package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// DefaultIssuer is the iss claim when none is configured.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Claims are the token's JWT claims.
type Claims struct {
	Issuer    string   `json:"iss"`
	Subject   string   `json:"sub"`
	Audience  []string `json:"aud"`
	Expiry    int64    `json:"exp"`
	IssuedAt  int64    `json:"iat"`
	NotBefore int64    `json:"nbf"`
	ID        string   `json:"jti,omitempty"`
	K8s       struct {
		Namespace      string `json:"namespace"`
		ServiceAccount struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

// Signer issues tokens.
type Signer struct {
	Key    *ecdsa.PrivateKey
	Issuer string // default DefaultIssuer
	Now    func() time.Time
}

// Token returns a signed token for ServiceAccount namespace/name (uid) valid for
// ttl and audiences (default: the issuer).
func (s *Signer) Token(namespace, name, uid string, audiences []string, ttl time.Duration) (string, time.Time, error) {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	iss := s.Issuer
	if iss == "" {
		iss = DefaultIssuer
	}
	if len(audiences) == 0 {
		audiences = []string{iss}
	}
	exp := now.Add(ttl)
	c := Claims{Issuer: iss, Subject: filters.ServiceAccountUsernamePrefix + namespace + ":" + name, Audience: audiences,
		Expiry: exp.Unix(), IssuedAt: now.Unix(), NotBefore: now.Unix()}
	c.K8s.Namespace, c.K8s.ServiceAccount.Name, c.K8s.ServiceAccount.UID = namespace, name, uid
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": keyID(&s.Key.PublicKey)})
	payload, err := json.Marshal(c)
	if err != nil {
		return "", time.Time{}, err
	}
	enc := base64.RawURLEncoding.EncodeToString
	signing := enc(header) + "." + enc(payload)
	sum := sha256.Sum256([]byte(signing))
	r, sv, err := ecdsa.Sign(rand.Reader, s.Key, sum[:])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	sv.FillBytes(sig[32:])
	return signing + "." + enc(sig), exp, nil
}

func keyID(pub *ecdsa.PublicKey) string {
	b, _ := pub.Bytes()
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Lookup returns the UID of a ServiceAccount (an error when it does not exist).
type Lookup func(ctx context.Context, namespace, name string) (uid string, err error)

// Authenticator authenticates ServiceAccount tokens.
type Authenticator struct {
	Keys []*ecdsa.PublicKey
	// Issuers accepted (default DefaultIssuer).
	Issuers []string
	// Audiences accepted: a token must name one (default the issuers).
	Audiences []string
	// Lookup checks the ServiceAccount still exists; nil skips the check.
	Lookup Lookup
	Now    func() time.Time
}

var _ filters.TokenAuthenticator = (*Authenticator)(nil)

// ErrInvalidToken is wrapped by every rejection.
var ErrInvalidToken = errors.New("serviceaccount: invalid token")

// AuthenticateToken implements filters.TokenAuthenticator. Tokens that are not
// JWTs of an accepted issuer are not its business (ok false, no error).
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*filters.User, bool, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, false, nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, false, nil
	}
	var c Claims
	if json.Unmarshal(payload, &c) != nil {
		return nil, false, nil
	}
	issuers := a.Issuers
	if len(issuers) == 0 {
		issuers = []string{DefaultIssuer}
	}
	if !slices.Contains(issuers, c.Issuer) {
		return nil, false, nil
	}
	var header struct{ Alg string }
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &header) != nil || header.Alg != "ES256" {
		return nil, false, fmt.Errorf("%w: unsupported header", ErrInvalidToken)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, false, fmt.Errorf("%w: malformed signature", ErrInvalidToken)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !slices.ContainsFunc(a.Keys, func(k *ecdsa.PublicKey) bool { return ecdsa.Verify(k, sum[:], r, s) }) {
		return nil, false, fmt.Errorf("%w: signature", ErrInvalidToken)
	}
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	if now.Unix() >= c.Expiry || (c.NotBefore != 0 && now.Unix()+60 < c.NotBefore) {
		return nil, false, fmt.Errorf("%w: expired or not yet valid", ErrInvalidToken)
	}
	auds := a.Audiences
	if len(auds) == 0 {
		auds = issuers
	}
	if !slices.ContainsFunc(c.Audience, func(s string) bool { return slices.Contains(auds, s) }) {
		return nil, false, fmt.Errorf("%w: audience", ErrInvalidToken)
	}
	ns, name, ok := filters.ServiceAccountOf(c.Subject)
	if !ok || ns != c.K8s.Namespace || name != c.K8s.ServiceAccount.Name {
		return nil, false, fmt.Errorf("%w: subject", ErrInvalidToken)
	}
	if a.Lookup != nil {
		uid, err := a.Lookup(ctx, ns, name)
		if err != nil {
			return nil, false, fmt.Errorf("%w: service account %s/%s: %v", ErrInvalidToken, ns, name, err)
		}
		if uid != c.K8s.ServiceAccount.UID {
			return nil, false, fmt.Errorf("%w: service account %s/%s was recreated", ErrInvalidToken, ns, name)
		}
	}
	return filters.ServiceAccountUser(ns, name, c.K8s.ServiceAccount.UID), true, nil
}

// TokenRequest is the serviceaccounts/token subresource: POST a TokenRequest,
// get it back with status.token.
type TokenRequest struct {
	Signer *Signer
	// MaxExpiration caps spec.expirationSeconds (default 48 h); the default is 1 h.
	MaxExpiration time.Duration
}

var _ registry.Subresource = (*TokenRequest)(nil)

// Verbs implements registry.Subresource.
func (t *TokenRequest) Verbs() []string { return []string{"create"} }

// Kind implements registry.Subresource.
func (t *TokenRequest) Kind() api.GroupVersionKind {
	return authenticationv1.GroupVersion.WithKind("TokenRequest")
}

// Serve implements registry.Subresource.
func (t *TokenRequest) Serve(w http.ResponseWriter, r *http.Request, parent registry.Parent) error {
	if r.Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(api.GroupResource{Resource: "serviceaccounts/token"}, strings.ToLower(r.Method))
	}
	m, err := parent.DecodeBody(r, reflect.TypeFor[authenticationv1.TokenRequest]())
	if err != nil {
		return err
	}
	req, err := registry.FromMap[authenticationv1.TokenRequest](m)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	sa, err := parent.Get(r.Context())
	if err != nil {
		return err
	}
	ttl := time.Hour
	maxTTL := t.MaxExpiration
	if maxTTL == 0 {
		maxTTL = 48 * time.Hour
	}
	if s := req.Spec.ExpirationSeconds; s != nil {
		if *s < 600 {
			return apierrors.NewBadRequest("spec.expirationSeconds: Invalid value: may not specify a duration less than 10 minutes")
		}
		ttl = min(time.Duration(*s)*time.Second, maxTTL)
	}
	token, exp, err := t.Signer.Token(parent.Namespace(), parent.Name(), api.NestedString(sa, "metadata", "uid"), req.Spec.Audiences, ttl)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	req.TypeMeta = api.TypeMeta{APIVersion: authenticationv1.GroupVersion.String(), Kind: "TokenRequest"}
	req.Name, req.Namespace = parent.Name(), parent.Namespace()
	secs := int64(ttl / time.Second)
	req.Spec.ExpirationSeconds = &secs
	if len(req.Spec.Audiences) == 0 {
		iss := t.Signer.Issuer
		if iss == "" {
			iss = DefaultIssuer
		}
		req.Spec.Audiences = []string{iss}
	}
	req.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: api.NewTime(exp.UTC().Truncate(time.Second))}
	b, err := json.Marshal(req)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(b)
	return nil
}
