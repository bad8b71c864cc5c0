package certutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

func TestEncodeECKeyRoundTrips(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeECKey(key)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "EC PRIVATE KEY" {
		t.Fatalf("PEM block = %v", block)
	}
	got, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil || !got.Equal(key) {
		t.Fatalf("parsed key differs: %v", err)
	}
}

func TestNewSerialIsPositiveAndVaries(t *testing.T) {
	a, b := NewSerial(), NewSerial()
	if a.Sign() <= 0 || b.Sign() <= 0 || a.Cmp(b) == 0 || a.BitLen() > 127 {
		t.Fatalf("serials %v, %v", a, b)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	for _, data := range []string{"one", "two"} {
		if err := WriteFileAtomic(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	if err := WriteFileAtomic(filepath.Join(t.TempDir(), "missing", "f"), nil, 0o600); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
