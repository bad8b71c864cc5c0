package cri_test

import (
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
)

func TestRegistryHost(t *testing.T) {
	for ref, want := range map[string]string{
		"busybox":                         "docker.io",
		"library/busybox:1.36":            "docker.io",
		"docker.io/library/busybox":       "docker.io",
		"index.docker.io/library/busybox": "docker.io",
		"127.0.0.1:5000/a/b:v1":           "127.0.0.1:5000",
		"localhost/a":                     "localhost",
		"ghcr.io/a/b@sha256:abc":          "ghcr.io",
		"team/app":                        "docker.io",
	} {
		if got := cri.RegistryHost(ref); got != want {
			t.Errorf("RegistryHost(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestSameRegistry(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"docker.io", "https://index.docker.io/v1/", true},
		{"registry-1.docker.io", "docker.io", true},
		{"127.0.0.1:5000", "http://127.0.0.1:5000", true},
		{"127.0.0.1:5000", "127.0.0.1:5001", false},
		{"example.com", "docker.io", false},
	} {
		if got := cri.SameRegistry(c.a, c.b); got != c.want {
			t.Errorf("SameRegistry(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
