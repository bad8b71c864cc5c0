package registrytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// tokenServer issues the registry's bearer tokens (Docker's token
// authentication): GET /token with basic auth returns a JWT (ES256, the
// signing certificate in its x5c header) granting the requested scopes.
// Wrong credentials get 401; no credentials get a token that grants nothing.
// POST (OAuth2) is not supported, so clients fall back to GET.
type tokenServer struct {
	user, pass string
	key        *ecdsa.PrivateKey
	certDER    []byte
	srv        *http.Server
	url        string
}

const tokenIssuer, tokenService = "registrytest", "registrytest"

// startTokenServer listens on 127.0.0.1 and writes the certificate bundle the
// registry verifies tokens with to certPath.
func startTokenServer(user, pass, certPath string) (*tokenServer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: tokenIssuer},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("token certificate: %w", err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, fmt.Errorf("write token certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("token server: %w", err)
	}
	t := &tokenServer{user: user, pass: pass, key: key, certDER: der, url: "http://" + ln.Addr().String() + "/token"}
	t.srv = &http.Server{Handler: http.HandlerFunc(t.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = t.srv.Serve(ln) }()
	return t, nil
}

func (t *tokenServer) close() { _ = t.srv.Close() }

type access struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

func (t *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "use GET", http.StatusNotFound)
		return
	}
	grants := []access{}
	user, pass, ok := r.BasicAuth()
	switch {
	case ok && (user != t.user || pass != t.pass):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"invalid username or password"}]}`))
		return
	case ok:
		for _, scope := range r.URL.Query()["scope"] {
			// repository:<name>:<actions>
			parts := strings.Split(scope, ":")
			if len(parts) < 3 {
				continue
			}
			grants = append(grants, access{Type: parts[0], Name: strings.Join(parts[1:len(parts)-1], ":"), Actions: strings.Split(parts[len(parts)-1], ",")})
		}
	}
	tok, err := t.sign(user, grants)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token": tok, "access_token": tok, "expires_in": 300,
		"issued_at": time.Now().UTC().Format(time.RFC3339)})
}

// sign makes an ES256 JWT the registry accepts.
func (t *tokenServer) sign(sub string, grants []access) (string, error) {
	now := time.Now()
	header, _ := json.Marshal(map[string]any{"typ": "JWT", "alg": "ES256", "x5c": []string{base64.StdEncoding.EncodeToString(t.certDER)}})
	var jti [8]byte
	_, _ = rand.Read(jti[:])
	claims, _ := json.Marshal(map[string]any{
		"iss": tokenIssuer, "sub": sub, "aud": tokenService,
		"exp": now.Add(5 * time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "iat": now.Unix(),
		"jti": fmt.Sprintf("%x", jti), "access": grants,
	})
	enc := base64.RawURLEncoding
	payload := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(payload))
	r, s, err := ecdsa.Sign(rand.Reader, t.key, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return payload + "." + enc.EncodeToString(sig), nil
}
