package encryption

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Configuration is an apiserver.config.k8s.io/v1 EncryptionConfiguration.
type Configuration struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Resources lists, in order, which resources use which providers; the first
	// entry naming a resource wins.
	Resources []ResourceConfiguration `json:"resources"`
}

// ResourceConfiguration selects resources and their providers.
type ResourceConfiguration struct {
	// Resources are "resource" (core group), "resource.group", "*.group" or
	// "*.*".
	Resources []string `json:"resources"`
	// Providers in order: the first encrypts, all decrypt.
	Providers []ProviderConfiguration `json:"providers"`
}

// ProviderConfiguration is one provider; exactly one field is set.
type ProviderConfiguration struct {
	AESGCM    *KeysConfiguration `json:"aesgcm,omitempty"`
	AESCBC    *KeysConfiguration `json:"aescbc,omitempty"`
	Identity  *struct{}          `json:"identity,omitempty"`
	Secretbox *KeysConfiguration `json:"secretbox,omitempty"`
	KMS       map[string]any     `json:"kms,omitempty"`
}

// KeysConfiguration lists keys in order: the first encrypts.
type KeysConfiguration struct {
	Keys []Key `json:"keys"`
}

// Key is a named base64-encoded key.
type Key struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// LoadFile reads an EncryptionConfiguration from a YAML or JSON file.
func LoadFile(path string) (*Configuration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read encryption configuration: %w", err)
	}
	var c Configuration
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("parse encryption configuration %s: %w", path, err)
	}
	if c.Kind != "" && c.Kind != "EncryptionConfiguration" {
		return nil, fmt.Errorf("parse encryption configuration %s: kind %q is not EncryptionConfiguration", path, c.Kind)
	}
	return &c, nil
}

// FromKeys is the configuration of --encryption-key: Secrets (or the given
// resources) encrypted with AES-GCM under keys, the first one encrypting, then
// the identity provider so that values stored before encryption was turned on
// still read. Each key is "NAME=BASE64" or just "BASE64" (named key1, key2, ...
// by position).
func FromKeys(keys []string, resources ...string) (*Configuration, error) {
	if len(keys) == 0 {
		return nil, errors.New("encryption: no keys")
	}
	if len(resources) == 0 {
		resources = []string{"secrets"}
	}
	kc := &KeysConfiguration{}
	for i, k := range keys {
		name, secret, ok := strings.Cut(k, "=")
		if !ok || looksBase64Padding(k) {
			name, secret = fmt.Sprintf("key%d", i+1), k
		}
		kc.Keys = append(kc.Keys, Key{Name: name, Secret: secret})
	}
	return &Configuration{
		APIVersion: "apiserver.config.k8s.io/v1", Kind: "EncryptionConfiguration",
		Resources: []ResourceConfiguration{{
			Resources: resources,
			Providers: []ProviderConfiguration{{AESGCM: kc}, {Identity: &struct{}{}}},
		}},
	}, nil
}

// looksBase64Padding reports whether the only '=' signs of s are base64
// padding at its end (a key without a name).
func looksBase64Padding(s string) bool {
	i := strings.IndexByte(s, '=')
	return i >= 0 && strings.Trim(s[i:], "=") == ""
}

// decodeKey decodes a base64 AES key of 16, 24 or 32 bytes.
func decodeKey(k Key) ([]byte, error) {
	if k.Name == "" {
		return nil, errors.New("key without a name")
	}
	if strings.ContainsAny(k.Name, ":") {
		return nil, fmt.Errorf("key %q: names may not contain ':'", k.Name)
	}
	b, err := base64.StdEncoding.DecodeString(k.Secret)
	if err != nil {
		return nil, fmt.Errorf("key %q: secret is not base64: %w", k.Name, err)
	}
	switch len(b) {
	case 16, 24, 32:
		return b, nil
	}
	return nil, fmt.Errorf("key %q: %d bytes; AES needs 16, 24 or 32", k.Name, len(b))
}
