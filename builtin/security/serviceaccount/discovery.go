package serviceaccount

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The paths of the ServiceAccount issuer's OpenID Connect discovery
// documents, as kube-apiserver serves them (RBAC role
// system:service-account-issuer-discovery).
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/openid/v1/jwks"
)

// Discovery serves the OpenID Connect discovery document of the token
// issuer and the JSON Web Key Set of its verification keys, so that OIDC
// relying parties (cloud IAM, Vault, go-oidc) verify ServiceAccount tokens
// without asking the API server (ServiceAccount issuer discovery).
type Discovery struct {
	config, jwks []byte
}

// NewDiscovery returns the documents of issuer (DefaultIssuer when empty)
// with keys. The key set is published at the issuer's own JWKSPath: the
// default issuer is the in-cluster name of this API server, which pods
// reach through the kubernetes Service.
func NewDiscovery(issuer string, keys []*ecdsa.PublicKey) (*Discovery, error) {
	if issuer == "" {
		issuer = DefaultIssuer
	}
	config, err := json.Marshal(map[string]any{
		"issuer":                                issuer,
		"jwks_uri":                              strings.TrimSuffix(issuer, "/") + JWKSPath,
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
	})
	if err != nil {
		return nil, fmt.Errorf("encode openid configuration: %w", err)
	}
	type jwk struct {
		Use string `json:"use"`
		Kty string `json:"kty"`
		Kid string `json:"kid"`
		Crv string `json:"crv"`
		Alg string `json:"alg"`
		X   string `json:"x"`
		Y   string `json:"y"`
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, k := range keys {
		b, err := k.Bytes() // 0x04 || X || Y
		if err != nil || len(b) != 65 {
			return nil, fmt.Errorf("publish ServiceAccount key: not a P-256 key: %v", err)
		}
		set.Keys = append(set.Keys, jwk{Use: "sig", Kty: "EC", Kid: keyID(k), Crv: "P-256", Alg: "ES256",
			X: base64.RawURLEncoding.EncodeToString(b[1:33]), Y: base64.RawURLEncoding.EncodeToString(b[33:])})
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("encode jwks: %w", err)
	}
	return &Discovery{config: config, jwks: jwks}, nil
}

// Wrap serves the two documents (GET and HEAD, with or without a trailing
// slash) and passes every other request to next. It belongs behind
// authentication and authorization, as kube-apiserver serves them.
func (d *Discovery) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		var contentType string
		switch strings.TrimSuffix(r.URL.Path, "/") {
		case DiscoveryPath:
			body, contentType = d.config, "application/json"
		case JWKSPath:
			body, contentType = d.jwks, "application/jwk-set+json"
		default:
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
