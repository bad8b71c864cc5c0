// Package serviceaccount issues and authenticates ServiceAccount tokens: ES256
// JWTs carrying Kubernetes' claims (iss, sub system:serviceaccount:NS:NAME, aud,
// exp, iat, nbf, a random jti and kubernetes.io {namespace, serviceaccount
// {name, uid}, and pod and node for a pod-bound token}). The Authenticator
// checks the signature, issuer, audience, time window and that the
// ServiceAccount still exists with the same UID, and yields the ServiceAccount's
// user (groups system:serviceaccounts, system:serviceaccounts:NS,
// system:authenticated; extras credential-id JTI=<jti>, pod-name, pod-uid,
// node-name, node-uid as Kubernetes sets them). TokenRequest serves the
// serviceaccounts/token subresource (kubectl create token; the kubelet's
// pod-bound tokens).
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
		// Pod and Node are set for a token bound to a pod (on that node).
		Pod  *ObjectRef `json:"pod,omitempty"`
		Node *ObjectRef `json:"node,omitempty"`
	} `json:"kubernetes.io"`
}

// ObjectRef names the object a token is bound to.
type ObjectRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Binding is what a token is bound to: a pod, and the node it runs on
// (either may be nil).
type Binding struct {
	Pod, Node *ObjectRef
}

// User extras of a ServiceAccount token, as Kubernetes sets them.
const (
	CredentialIDKey = "authentication.kubernetes.io/credential-id"
	PodNameKey      = "authentication.kubernetes.io/pod-name"
	PodUIDKey       = "authentication.kubernetes.io/pod-uid"
	NodeNameKey     = "authentication.kubernetes.io/node-name"
	NodeUIDKey      = "authentication.kubernetes.io/node-uid"
)

// Signer issues tokens.
type Signer struct {
	Key    *ecdsa.PrivateKey
	Issuer string // default DefaultIssuer
	Now    func() time.Time
}

// Token returns a signed token for ServiceAccount namespace/name (uid) valid for
// ttl and audiences (default: the issuer).
func (s *Signer) Token(namespace, name, uid string, audiences []string, ttl time.Duration) (string, time.Time, error) {
	return s.BoundToken(namespace, name, uid, audiences, ttl, Binding{})
}

// BoundToken is Token for a token bound to b (its pod and node claims). Every
// token gets a random jti, which authenticates as the credential-id
// JTI=<jti>.
func (s *Signer) BoundToken(namespace, name, uid string, audiences []string, ttl time.Duration, b Binding) (string, time.Time, error) {
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
	c.K8s.Pod, c.K8s.Node = b.Pod, b.Node
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("token id: %w", err)
	}
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80 // a version 4 UUID
	c.ID = fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])
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

// invalid is a rejection worded as Kubernetes words it (the text a TokenReview
// reports in status.error), wrapping ErrInvalidToken.
type invalid struct{ msg string }

func (e *invalid) Error() string { return e.msg }
func (e *invalid) Unwrap() error { return ErrInvalidToken }

func invalidf(format string, args ...any) error { return &invalid{msg: fmt.Sprintf(format, args...)} }

// AuthenticateToken implements filters.TokenAuthenticator for requests to
// this API server: the token must be meant for one of its own audiences
// (Audiences, default the issuers). Tokens that are not JWTs of an accepted
// issuer are not its business (ok false, no error).
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*filters.User, bool, error) {
	u, _, ok, err := a.AuthenticateTokenFor(ctx, token, nil)
	return u, ok, err
}

// AuthenticateTokenFor authenticates token for the target audiences (nil:
// this API server's own, see AuthenticateToken), as a TokenReview with
// spec.audiences does. It returns the audiences the token is valid for: those
// of the targets the token names. A token naming none of them is refused with
// Kubernetes' message `token audiences [...] is invalid for the target
// audiences [...]`.
func (a *Authenticator) AuthenticateTokenFor(ctx context.Context, token string, audiences []string) (*filters.User, []string, bool, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, nil, false, nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, nil, false, nil
	}
	var c Claims
	if json.Unmarshal(payload, &c) != nil {
		return nil, nil, false, nil
	}
	issuers := a.Issuers
	if len(issuers) == 0 {
		issuers = []string{DefaultIssuer}
	}
	if !slices.Contains(issuers, c.Issuer) {
		return nil, nil, false, nil
	}
	var header struct{ Alg string }
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(hb, &header) != nil || header.Alg != "ES256" {
		return nil, nil, false, invalidf("unsupported token header: algorithm %q", header.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, nil, false, invalidf("invalid signature: malformed")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !slices.ContainsFunc(a.Keys, func(k *ecdsa.PublicKey) bool { return ecdsa.Verify(k, sum[:], r, s) }) {
		return nil, nil, false, invalidf("invalid signature: verification failed")
	}
	implicit := a.Audiences
	if len(implicit) == 0 {
		implicit = issuers
	}
	tokenAuds := c.Audience
	if len(tokenAuds) == 0 {
		tokenAuds = implicit // a token without aud is for this API server only
	}
	targets := audiences
	if len(targets) == 0 {
		targets = implicit
	}
	granted := intersect(targets, tokenAuds)
	if len(granted) == 0 {
		return nil, nil, false, invalidf("token audiences %q is invalid for the target audiences %q", tokenAuds, targets)
	}
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	switch {
	case now.Unix() >= c.Expiry:
		return nil, nil, false, invalidf("service account token has expired")
	case c.NotBefore != 0 && now.Unix()+60 < c.NotBefore:
		return nil, nil, false, invalidf("service account token is not valid yet")
	}
	ns, name, ok := filters.ServiceAccountOf(c.Subject)
	if !ok || ns != c.K8s.Namespace || name != c.K8s.ServiceAccount.Name {
		return nil, nil, false, invalidf("service account token claims could not be validated: subject %q does not name %s/%s", c.Subject, c.K8s.Namespace, c.K8s.ServiceAccount.Name)
	}
	if a.Lookup != nil {
		uid, err := a.Lookup(ctx, ns, name)
		if err != nil {
			return nil, nil, false, invalidf("service account %s/%s: %v", ns, name, err)
		}
		if uid != c.K8s.ServiceAccount.UID {
			return nil, nil, false, invalidf("service account UID (%s) does not match claim (%s)", uid, c.K8s.ServiceAccount.UID)
		}
	}
	u := filters.ServiceAccountUser(ns, name, c.K8s.ServiceAccount.UID)
	u.Extra = extras(&c)
	return u, granted, true, nil
}

// extras are the user extras of a token's claims: its credential ID, the
// pod and the node it is bound to.
func extras(c *Claims) map[string][]string {
	out := map[string][]string{}
	if c.ID != "" {
		out[CredentialIDKey] = []string{"JTI=" + c.ID}
	}
	if p := c.K8s.Pod; p != nil && p.Name != "" && p.UID != "" {
		out[PodNameKey], out[PodUIDKey] = []string{p.Name}, []string{p.UID}
	}
	if n := c.K8s.Node; n != nil && n.Name != "" {
		out[NodeNameKey] = []string{n.Name}
		if n.UID != "" {
			out[NodeUIDKey] = []string{n.UID}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// intersect returns the elements of a that b holds, in a's order.
func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// TokenRequest is the serviceaccounts/token subresource: POST a TokenRequest,
// get it back with status.token.
type TokenRequest struct {
	Signer *Signer
	// Lookup reads an object ("pods" in namespace, "nodes" with namespace
	// ""); nil binds a pod-bound token to the reference as given. A token
	// bound to a pod carries the pod (which must exist with the reference's
	// UID) and the node it is scheduled to.
	Lookup func(ctx context.Context, resource, namespace, name string) (map[string]any, error)
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
	binding, err := t.binding(r.Context(), parent.Namespace(), req.Spec.BoundObjectRef)
	if err != nil {
		return err
	}
	token, exp, err := t.Signer.BoundToken(parent.Namespace(), parent.Name(), api.NestedString(sa, "metadata", "uid"), req.Spec.Audiences, ttl, binding)
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

// binding resolves a TokenRequest's boundObjectRef of kind Pod into the
// token's pod and node claims.
func (t *TokenRequest) binding(ctx context.Context, namespace string, ref *authenticationv1.BoundObjectReference) (Binding, error) {
	if ref == nil || ref.Kind != "Pod" {
		return Binding{}, nil
	}
	b := Binding{Pod: &ObjectRef{Name: ref.Name, UID: ref.UID}}
	if t.Lookup == nil {
		return b, nil
	}
	pod, err := t.Lookup(ctx, "pods", namespace, ref.Name)
	if err != nil {
		return Binding{}, err
	}
	uid := api.NestedString(pod, "metadata", "uid")
	if ref.UID != "" && ref.UID != uid {
		return Binding{}, apierrors.NewConflict(api.GroupResource{Resource: "pods"}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID).Error())
	}
	b.Pod.UID = uid
	if nodeName := api.NestedString(pod, "spec", "nodeName"); nodeName != "" {
		b.Node = &ObjectRef{Name: nodeName}
		if node, err := t.Lookup(ctx, "nodes", "", nodeName); err == nil {
			b.Node.UID = api.NestedString(node, "metadata", "uid")
		}
	}
	return b, nil
}
