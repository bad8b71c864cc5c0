package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestAuthenticateTokenFor checks the audience rules a TokenReview relies on:
// a token is valid for the targets it names (default: the API server's own
// audience, the issuer), and is refused with Kubernetes' message otherwise.
func TestAuthenticateTokenFor(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	signer := &Signer{Key: key, Now: func() time.Time { return now }}
	auth := &Authenticator{Keys: []*ecdsa.PublicKey{&key.PublicKey}, Now: func() time.Time { return now },
		Lookup: func(context.Context, string, string) (string, error) { return "uid-1", nil }}
	for _, tc := range []struct {
		name      string
		tokenAuds []string
		targets   []string
		want      []string
		err       string
	}{
		{name: "default audience, default target", want: []string{DefaultIssuer}},
		{name: "named audience, default target", tokenAuds: []string{"vault"},
			err: `token audiences ["vault"] is invalid for the target audiences ["` + DefaultIssuer + `"]`},
		{name: "named audience among targets", tokenAuds: []string{"vault", "api"}, targets: []string{"other", "api", "vault"},
			want: []string{"api", "vault"}},
		{name: "no common audience", tokenAuds: []string{"vault"}, targets: []string{"other"},
			err: `token audiences ["vault"] is invalid for the target audiences ["other"]`},
		{name: "default audience, other target", targets: []string{"other"},
			err: `token audiences ["` + DefaultIssuer + `"] is invalid for the target audiences ["other"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			token, _, err := signer.Token("ns", "sa", "uid-1", tc.tokenAuds, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			u, got, ok, err := auth.AuthenticateTokenFor(context.Background(), token, tc.targets)
			if tc.err != "" {
				if ok || err == nil || err.Error() != tc.err || !errors.Is(err, ErrInvalidToken) {
					t.Fatalf("got ok=%v err=%v, want error %q wrapping ErrInvalidToken", ok, err, tc.err)
				}
				return
			}
			if !ok || err != nil {
				t.Fatalf("got ok=%v err=%v", ok, err)
			}
			if u.Name != "system:serviceaccount:ns:sa" || u.UID != "uid-1" {
				t.Errorf("user %+v", u)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("audiences %q, want %q", got, tc.want)
			}
		})
	}
}
