package bootstrap

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Names and keys of bootstrap token Secrets.
const (
	SecretType       = "bootstrap.kubernetes.io/token"
	SecretNamespace  = "kube-system"
	SecretNamePrefix = "bootstrap-token-"
	UserPrefix       = "system:bootstrap:"
	Group            = "system:bootstrappers"
	// DefaultExtraGroup is what `converge token create` adds (kubeadm's name).
	DefaultExtraGroup = "system:bootstrappers:converge:default-node-token"

	KeyTokenID      = "token-id"
	KeyTokenSecret  = "token-secret"
	KeyExpiration   = "expiration"
	KeyDescription  = "description"
	KeyExtraGroups  = "auth-extra-groups"
	KeyUsageAuth    = "usage-bootstrap-authentication"
	KeyUsageSigning = "usage-bootstrap-signing"
)

var tokenRE = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

// Parse splits a token into its ID and secret.
func Parse(token string) (id, secret string, err error) {
	m := tokenRE.FindStringSubmatch(token)
	if m == nil {
		return "", "", fmt.Errorf("bootstrap token %q is not of the form [a-z0-9]{6}.[a-z0-9]{16}", redact(token))
	}
	return m[1], m[2], nil
}

func redact(token string) string {
	if id, _, ok := strings.Cut(token, "."); ok {
		return id + ".<redacted>"
	}
	return "<redacted>"
}

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func random(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// NewToken returns a random token.
func NewToken() (string, error) {
	id, err := random(6)
	if err != nil {
		return "", err
	}
	secret, err := random(16)
	if err != nil {
		return "", err
	}
	return id + "." + secret, nil
}

// NewSecret is the Secret that makes token valid for authentication (and
// signing) until now+ttl (no expiry when ttl is 0), in extraGroups (each must
// start with system:bootstrappers:).
func NewSecret(token, description string, ttl time.Duration, now time.Time, extraGroups ...string) (*corev1.Secret, error) {
	id, secret, err := Parse(token)
	if err != nil {
		return nil, err
	}
	for _, g := range extraGroups {
		if !strings.HasPrefix(g, Group+":") {
			return nil, fmt.Errorf("bootstrap token group %q must start with %s:", g, Group)
		}
	}
	data := map[string][]byte{
		KeyTokenID: []byte(id), KeyTokenSecret: []byte(secret),
		KeyUsageAuth: []byte("true"), KeyUsageSigning: []byte("true"),
	}
	if description != "" {
		data[KeyDescription] = []byte(description)
	}
	if ttl > 0 {
		data[KeyExpiration] = []byte(now.Add(ttl).UTC().Format(time.RFC3339))
	}
	if len(extraGroups) > 0 {
		data[KeyExtraGroups] = []byte(strings.Join(extraGroups, ","))
	}
	return &corev1.Secret{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: api.ObjectMeta{Name: SecretNamePrefix + id, Namespace: SecretNamespace},
		Type:       corev1.SecretType(SecretType),
		Data:       data,
	}, nil
}

// SecretLister lists the Secrets of a namespace as stored JSON.
type SecretLister func(ctx context.Context, namespace string) ([][]byte, error)

// TokenAuthenticator authenticates bootstrap tokens against their Secrets.
type TokenAuthenticator struct {
	Secrets SecretLister
	// Now is the clock (default time.Now).
	Now func() time.Time
}

var _ filters.TokenAuthenticator = (*TokenAuthenticator)(nil)

type storedSecret struct {
	Metadata struct {
		Name              string    `json:"name"`
		DeletionTimestamp *api.Time `json:"deletionTimestamp"`
	} `json:"metadata"`
	Type string            `json:"type"`
	Data map[string][]byte `json:"data"`
}

// AuthenticateToken implements filters.TokenAuthenticator: tokens that are
// not bootstrap tokens are not its business (ok false, no error).
func (a *TokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (*filters.User, bool, error) {
	id, secret, err := Parse(token)
	if err != nil {
		return nil, false, nil
	}
	items, err := a.Secrets(ctx, SecretNamespace)
	if err != nil {
		return nil, false, fmt.Errorf("bootstrap token: read secrets: %w", err)
	}
	for _, b := range items {
		var s storedSecret
		if json.Unmarshal(b, &s) != nil || s.Metadata.Name != SecretNamePrefix+id {
			continue
		}
		if s.Type != SecretType || s.Metadata.DeletionTimestamp != nil || string(s.Data[KeyTokenID]) != id ||
			subtle.ConstantTimeCompare(s.Data[KeyTokenSecret], []byte(secret)) != 1 || string(s.Data[KeyUsageAuth]) != "true" {
			return nil, false, nil
		}
		if exp := string(s.Data[KeyExpiration]); exp != "" {
			t, err := time.Parse(time.RFC3339, exp)
			now := time.Now
			if a.Now != nil {
				now = a.Now
			}
			if err != nil || !now().Before(t) {
				return nil, false, nil
			}
		}
		groups := []string{Group}
		if extra := string(s.Data[KeyExtraGroups]); extra != "" {
			for _, g := range strings.Split(extra, ",") {
				if g = strings.TrimSpace(g); strings.HasPrefix(g, Group+":") {
					groups = append(groups, g)
				}
			}
		}
		return &filters.User{Name: UserPrefix + id, Groups: append(groups, filters.GroupAuthenticated)}, true, nil
	}
	return nil, false, nil
}
