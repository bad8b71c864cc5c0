package containerd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
)

func TestEndpointScheme(t *testing.T) {
	reg := Registries{Configs: map[string]RegistryConfig{"127.0.0.2:5000": {TLS: &RegistryTLS{InsecureSkipVerify: true}}}}
	for _, c := range []struct{ ep, scheme, host, path string }{
		{"127.0.0.1:5000", "http", "127.0.0.1:5000", "/v2"},
		{"127.9.8.7", "http", "127.9.8.7", "/v2"},
		{"[::1]:5000", "http", "[::1]:5000", "/v2"},
		{"localhost:5000", "http", "localhost:5000", "/v2"},
		{"registry.example.com", "https", "registry.example.com", "/v2"},
		{"127.0.0.2:5000", "https", "127.0.0.2:5000", "/v2"}, // a tls entry asks for HTTPS
		{"https://mirror.example.com/cache/", "https", "mirror.example.com", "/cache/v2"},
		{"http://mirror.example.com:8080/v2", "http", "mirror.example.com:8080", "/v2"},
	} {
		h, err := reg.endpoint(c.ep, nil)
		if err != nil || h.Scheme != c.scheme || h.Host != c.host || h.Path != c.path {
			t.Errorf("endpoint(%q) = %s://%s%s, %v; want %s://%s%s", c.ep, h.Scheme, h.Host, h.Path, err, c.scheme, c.host, c.path)
		}
	}
	if _, err := reg.endpoint("http://", nil); err == nil {
		t.Error("endpoint(http://) accepted")
	}
}

func TestCredential(t *testing.T) {
	reg := Registries{Configs: map[string]RegistryConfig{
		"r.example.com":   {Auth: &RegistryAuth{Auth: "YWxpY2U6czNjcmV0"}},
		"docker.io":       {Auth: &RegistryAuth{Username: "hub", Password: "pw"}},
		"bad.example.com": {Auth: &RegistryAuth{Auth: "!"}},
	}}
	given := []cri.Credential{{Host: "r.example.com", Username: "pod", Password: "secret"}}
	for _, c := range []struct {
		host      string
		creds     []cri.Credential
		user, pwd string
		wantErr   bool
	}{
		{"r.example.com", nil, "alice", "s3cret", false},
		{"r.example.com", given, "pod", "secret", false}, // the pull's credentials first
		{"registry-1.docker.io", nil, "hub", "pw", false},
		{"other.example.com", given, "", "", false},
		{"bad.example.com", nil, "", "", true},
	} {
		got, err := reg.credential(c.host, c.creds)
		if (err != nil) != c.wantErr || got.Username != c.user || got.Password != c.pwd {
			t.Errorf("credential(%s) = %+v, %v; want %s/%s (error %v)", c.host, got, err, c.user, c.pwd, c.wantErr)
		}
	}
}

func TestLoadRegistries(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(`mirrors:
  docker.io:
    endpoint: ["http://127.0.0.1:5000"]
configs:
  "127.0.0.1:5000":
    auth: {username: alice, password: s3cret, identitytoken: tok}
    tls: {ca_file: /ca.pem, cert_file: /c.pem, key_file: /k.pem, insecure_skip_verify: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRegistries(good)
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.Configs["127.0.0.1:5000"]
	if r.Mirrors["docker.io"].Endpoints[0] != "http://127.0.0.1:5000" || cfg.Auth.Username != "alice" || cfg.Auth.IdentityToken != "tok" ||
		cfg.TLS.CAFile != "/ca.pem" || cfg.TLS.KeyFile != "/k.pem" || !cfg.TLS.InsecureSkipVerify {
		t.Errorf("LoadRegistries = %+v", r)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("mirror:\n  docker.io: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRegistries(bad); err == nil || !strings.Contains(err.Error(), "mirror") {
		t.Errorf("LoadRegistries with an unknown field = %v", err)
	}
}
