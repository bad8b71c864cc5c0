package serviceaccount_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/security/serviceaccount"
)

// TestDiscovery: the OpenID configuration names the issuer and its key set,
// and a token the Signer issues verifies with the published key of its kid,
// as an OIDC relying party (go-oidc) verifies it.
func TestDiscovery(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	d, err := serviceaccount.NewDiscovery("", []*ecdsa.PublicKey{&key.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "next", http.StatusTeapot) })
	h := d.Wrap(next)
	get := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}

	rec := get(http.MethodGet, "/.well-known/openid-configuration")
	var config struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
		Types   []string `json:"response_types_supported"`
		Subject []string `json:"subject_types_supported"`
	}
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || json.Unmarshal(rec.Body.Bytes(), &config) != nil {
		t.Fatalf("openid configuration: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if config.Issuer != serviceaccount.DefaultIssuer || config.JWKSURI != serviceaccount.DefaultIssuer+"/openid/v1/jwks" ||
		strings.Join(config.Algs, ",") != "ES256" || strings.Join(config.Types, ",") != "id_token" || strings.Join(config.Subject, ",") != "public" {
		t.Fatalf("openid configuration: %+v", config)
	}

	rec = get(http.MethodGet, "/openid/v1/jwks/")
	var set struct {
		Keys []struct{ Use, Kty, Kid, Crv, Alg, X, Y string } `json:"keys"`
	}
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/jwk-set+json" || json.Unmarshal(rec.Body.Bytes(), &set) != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	k := set.Keys[0]
	if k.Use != "sig" || k.Kty != "EC" || k.Crv != "P-256" || k.Alg != "ES256" {
		t.Fatalf("jwk: %+v", k)
	}

	tok, _, err := (&serviceaccount.Signer{Key: key, Now: time.Now}).Token("ns", "sa", "uid-1", []string{"oidc-test"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var header struct{ Alg, Kid string }
	if err := json.Unmarshal(hb, &header); err != nil || header.Alg != "ES256" || header.Kid != k.Kid {
		t.Fatalf("token header %s: want ES256 and the published kid %q", hb, k.Kid)
	}
	x, _ := base64.RawURLEncoding.DecodeString(k.X)
	y, _ := base64.RawURLEncoding.DecodeString(k.Y)
	pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the token does not verify with the published key")
	}

	if rec := get(http.MethodHead, "/openid/v1/jwks"); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD jwks: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	if rec := get(http.MethodPost, "/.well-known/openid-configuration"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST openid configuration: %d, want 405", rec.Code)
	}
	if rec := get(http.MethodGet, "/api"); rec.Code != http.StatusTeapot {
		t.Errorf("other paths go on: %d", rec.Code)
	}
}
