package encryption

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/storage"
)

func key(b byte, n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, n)) }

// mapStore is the minimum of storage.Interface the wrapper's reads and writes
// need: Get, Create, Update, List.
type mapStore struct {
	storage.Interface
	m map[string][]byte
}

func (s *mapStore) Get(_ context.Context, k string) (storage.KeyValue, error) {
	v, ok := s.m[k]
	if !ok {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return storage.KeyValue{Key: k, Value: v}, nil
}

func (s *mapStore) Create(_ context.Context, k string, v []byte) (int64, error) {
	s.m[k] = v
	return 1, nil
}

func (s *mapStore) Update(_ context.Context, k string, v []byte, _ int64) (int64, error) {
	s.m[k] = v
	return 2, nil
}

func (s *mapStore) List(_ context.Context, prefix string, _ storage.ListOptions) (storage.ListResult, error) {
	var r storage.ListResult
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) {
			r.Items = append(r.Items, storage.KeyValue{Key: k, Value: v})
		}
	}
	return r, nil
}

func wrap(t *testing.T, inner storage.Interface, cfg *Configuration) storage.Interface {
	t.Helper()
	s, err := Wrap(inner, cfg)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	return s
}

func keysCfg(t *testing.T, keys ...string) *Configuration {
	t.Helper()
	c, err := FromKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoundTripAndPrefix(t *testing.T) {
	ctx := context.Background()
	const secretKey = "/registry/core/secrets/default/s1"
	plain := []byte(`{"data":{"password":"aHVudGVyMg=="}}`)
	for _, tc := range []struct {
		name   string
		cfg    *Configuration
		prefix string
	}{
		{"aesgcm 32", keysCfg(t, "k1="+key(1, 32)), "k8s:enc:aesgcm:v1:k1:"},
		{"aesgcm 16 unnamed", keysCfg(t, key(2, 16)), "k8s:enc:aesgcm:v1:key1:"},
		{"aescbc", &Configuration{Resources: []ResourceConfiguration{{Resources: []string{"secrets"},
			Providers: []ProviderConfiguration{{AESCBC: &KeysConfiguration{Keys: []Key{{Name: "c", Secret: key(3, 32)}}}}}}}}, "k8s:enc:aescbc:v1:c:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &mapStore{m: map[string][]byte{}}
			s := wrap(t, inner, tc.cfg)
			if _, err := s.Create(ctx, secretKey, plain); err != nil {
				t.Fatal(err)
			}
			raw := inner.m[secretKey]
			if !bytes.HasPrefix(raw, []byte(tc.prefix)) || bytes.Contains(raw, []byte("aHVudGVyMg")) {
				t.Fatalf("stored %q: want prefix %q and no plaintext", raw, tc.prefix)
			}
			kv, err := s.Get(ctx, secretKey)
			if err != nil || !bytes.Equal(kv.Value, plain) || kv.Stale {
				t.Fatalf("Get = %q stale=%v, %v", kv.Value, kv.Stale, err)
			}
			// Other resources are stored as they are.
			if _, err := s.Create(ctx, "/registry/core/configmaps/default/c", plain); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(inner.m["/registry/core/configmaps/default/c"], plain) {
				t.Fatalf("configmap was transformed")
			}
		})
	}
}

func TestRotationAndStale(t *testing.T) {
	ctx := context.Background()
	const k = "/registry/core/secrets/ns/a"
	inner := &mapStore{m: map[string][]byte{"/registry/core/secrets/ns/old": []byte(`{"plain":true}`)}}
	old := wrap(t, inner, keysCfg(t, "old="+key(1, 32)))
	if _, err := old.Create(ctx, k, []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		cfg       *Configuration
		key       string
		wantErr   bool
		wantStale bool
	}{
		{"old key still first", keysCfg(t, "old="+key(1, 32), "new="+key(2, 32)), k, false, false},
		{"new key first, old decrypts", keysCfg(t, "new="+key(2, 32), "old="+key(1, 32)), k, false, true},
		{"old key removed", keysCfg(t, "new="+key(2, 32)), k, true, false},
		{"same name other secret", keysCfg(t, "old="+key(9, 32)), k, true, false},
		{"plaintext before encryption", keysCfg(t, "new="+key(2, 32)), "/registry/core/secrets/ns/old", false, true},
		{"plaintext without identity", &Configuration{Resources: []ResourceConfiguration{{Resources: []string{"secrets"},
			Providers: []ProviderConfiguration{{AESGCM: &KeysConfiguration{Keys: []Key{{Name: "new", Secret: key(2, 32)}}}}}}}},
			"/registry/core/secrets/ns/old", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kv, err := wrap(t, inner, tc.cfg).Get(ctx, tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Get error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && kv.Stale != tc.wantStale {
				t.Fatalf("stale = %v, want %v", kv.Stale, tc.wantStale)
			}
		})
	}
	// A value moved to another key does not decrypt (the key is authenticated).
	inner.m["/registry/core/secrets/ns/b"] = inner.m[k]
	if _, err := old.Get(ctx, "/registry/core/secrets/ns/b"); err == nil {
		t.Fatal("a value copied to another key decrypted")
	}
}

func TestResourceSelection(t *testing.T) {
	gcm := []ProviderConfiguration{{AESGCM: &KeysConfiguration{Keys: []Key{{Name: "k", Secret: key(1, 32)}}}}}
	for _, tc := range []struct {
		resources []string
		key       string
		want      bool
	}{
		{[]string{"secrets"}, "/registry/core/secrets/ns/a", true},
		{[]string{"secrets"}, "/registry/core/secretsx/ns/a", false},
		{[]string{"configmaps", "secrets"}, "/registry/core/configmaps/ns/a", true},
		{[]string{"deployments.apps"}, "/registry/apps/deployments/ns/a", true},
		{[]string{"*.apps"}, "/registry/apps/statefulsets/ns/a", true},
		{[]string{"*.apps"}, "/registry/core/secrets/ns/a", false},
		{[]string{"*.*"}, "/registry/example.com/widgets/ns/a", true},
		{[]string{"secrets"}, "/other/core/secrets/ns/a", false},
	} {
		s, err := Wrap(&mapStore{}, &Configuration{Resources: []ResourceConfiguration{{Resources: tc.resources, Providers: gcm}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.(*Store).providersFor(tc.key) != nil; got != tc.want {
			t.Errorf("%v on %s = %v, want %v", tc.resources, tc.key, got, tc.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"not base64", []string{"k=%%%"}},
		{"bad length", []string{"k=" + key(1, 10)}},
		{"duplicate", []string{"k=" + key(1, 32), "k=" + key(2, 32)}},
		{"colon in name", []string{"a:b=" + key(1, 32)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := FromKeys(tc.keys)
			if err == nil {
				_, err = Wrap(&mapStore{}, cfg)
			}
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := FromKeys(nil); err == nil || errors.Is(err, storage.ErrNotFound) {
		t.Fatal("FromKeys(nil) succeeded")
	}
}
