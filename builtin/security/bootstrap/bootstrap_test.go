package bootstrap

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

func TestParseAndNewToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"abcdef.0123456789abcdef", true},
		{"ABCDEF.0123456789abcdef", false},
		{"abcde.0123456789abcdef", false},
		{"abcdef.0123456789abcde", false},
		{"abcdef0123456789abcdef", false},
		{"", false},
	} {
		_, _, err := Parse(tc.token)
		if (err == nil) != tc.ok {
			t.Errorf("Parse(%q) = %v, want ok=%v", tc.token, err, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789abcde") {
			t.Errorf("Parse(%q) error shows the secret: %v", tc.token, err)
		}
	}
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken()
	if _, _, err := Parse(a); err != nil || a == b {
		t.Fatalf("NewToken: %q %q %v", a, b, err)
	}
}

func TestTokenAuthenticator(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const token = "abcdef.0123456789abcdef"
	secret := func(mutate func(*corev1.Secret)) []byte {
		s, err := NewSecret(token, "", time.Hour, now, DefaultExtraGroup)
		if err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(s)
		}
		b, _ := json.Marshal(s)
		return b
	}
	for _, tc := range []struct {
		name   string
		token  string
		secret []byte
		now    time.Time
		ok     bool
	}{
		{"valid", token, secret(nil), now, true},
		{"wrong secret", "abcdef.0000000000000000", secret(nil), now, false},
		{"unknown id", "zzzzzz.0123456789abcdef", secret(nil), now, false},
		{"expired", token, secret(nil), now.Add(2 * time.Hour), false},
		{"not for authentication", token, secret(func(s *corev1.Secret) { delete(s.Data, KeyUsageAuth) }), now, false},
		{"wrong type", token, secret(func(s *corev1.Secret) { s.Type = "Opaque" }), now, false},
		{"not a bootstrap token", "some-static-token", secret(nil), now, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &TokenAuthenticator{Now: func() time.Time { return tc.now },
				Secrets: func(_ context.Context, ns string) ([][]byte, error) {
					if ns != SecretNamespace {
						t.Fatalf("namespace %q", ns)
					}
					return [][]byte{tc.secret}, nil
				}}
			u, ok, err := a.AuthenticateToken(context.Background(), tc.token)
			if err != nil || ok != tc.ok {
				t.Fatalf("AuthenticateToken = %v, %v, %v; want ok=%v", u, ok, err, tc.ok)
			}
			if ok && (u.Name != "system:bootstrap:abcdef" || !u.InGroup(Group) || !u.InGroup(DefaultExtraGroup) || !u.InGroup("system:authenticated")) {
				t.Fatalf("user %+v", u)
			}
		})
	}
	if _, err := NewSecret(token, "", 0, now, "system:masters"); err == nil {
		t.Fatal("NewSecret accepted a group outside system:bootstrappers")
	}
}
