package kubeconfig_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/rest"
)

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

const twoContexts = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://dev.example:6443
    certificate-authority-data: ` + "CADATA" + `
    tls-server-name: api.dev
- name: prod
  cluster:
    server: https://prod.example:6443
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    token: abc
    client-certificate-data: CERTDATA
    client-key-data: KEYDATA
- name: prod-user
  user:
    tokenFile: tok
    client-certificate: /abs/cert.pem
    client-key: key.pem
contexts:
- name: dev
  context: {cluster: dev, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod, user: prod-user}
- name: broken-cluster
  context: {cluster: nope, user: dev-user}
- name: broken-user
  context: {cluster: dev, user: nope}
`

func TestLoadKubeconfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := strings.NewReplacer("CADATA", b64("ca"), "CERTDATA", b64("cert"), "KEYDATA", b64("key")).Replace(twoContexts)
	path := write(t, filepath.Join(dir, "config"), content)
	badB64 := write(t, filepath.Join(dir, "bad"), strings.NewReplacer("CADATA", "not@base64", "CERTDATA", "", "KEYDATA", "").Replace(twoContexts))
	noCurrent := write(t, filepath.Join(dir, "nocurrent"), strings.Replace(content, "current-context: dev", "", 1))

	cases := []struct {
		name, path, context string
		want                *rest.Config
		wantNS              string
		wantErr             string
	}{
		{name: "current context with base64 data", path: path, want: &rest.Config{
			Host: "https://dev.example:6443", BearerToken: "abc",
			TLS: rest.TLSConfig{CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key"), ServerName: "api.dev"},
		}, wantNS: "team-a"},
		{name: "named context with relative paths", path: path, context: "prod", want: &rest.Config{
			Host: "https://prod.example:6443", BearerTokenFile: filepath.Join(dir, "tok"),
			TLS: rest.TLSConfig{CAFile: filepath.Join(dir, "certs/ca.pem"), CertFile: "/abs/cert.pem", KeyFile: filepath.Join(dir, "key.pem"), Insecure: true},
		}, wantNS: "default"},
		{name: "missing context", path: path, context: "nope", wantErr: `context "nope" not found; contexts in this kubeconfig: dev, prod, broken-cluster, broken-user`},
		{name: "missing cluster", path: path, context: "broken-cluster", wantErr: `refers to cluster "nope", which is not defined`},
		{name: "missing user", path: path, context: "broken-user", wantErr: `refers to user "nope", which is not defined`},
		{name: "no current context", path: noCurrent, wantErr: "current-context is not set"},
		{name: "bad base64", path: badB64, wantErr: "certificate-authority-data is not valid base64"},
		{name: "missing file", path: filepath.Join(dir, "absent"), wantErr: "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, ns, err := kubeconfig.LoadKubeconfig(tc.path, tc.context)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg); diff != "" {
				t.Fatalf("config (-want +got):\n%s", diff)
			}
			if ns != tc.wantNS {
				t.Fatalf("namespace = %q, want %q", ns, tc.wantNS)
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kc := func(server, ns string) string {
		return "current-context: c\nclusters:\n- name: c\n  cluster: {server: " + server + "}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: " + ns + "}\n"
	}
	flagFile := write(t, filepath.Join(dir, "flag"), kc("https://flag", "f"))
	envA := write(t, filepath.Join(dir, "a"), kc("https://env-a", "a"))
	envB := write(t, filepath.Join(dir, "b"), "clusters:\n- name: other\n  cluster: {server: https://other}\ncontexts:\n- name: o\n  context: {cluster: other}\n")
	home := filepath.Join(dir, "home")
	write(t, filepath.Join(home, ".kube", "config"), kc("https://home", "h"))
	sa := filepath.Join(dir, "sa")
	write(t, filepath.Join(sa, "token"), "sa-token")
	write(t, filepath.Join(sa, "ca.crt"), "ca")
	write(t, filepath.Join(sa, "namespace"), "pod-ns\n")

	envOf := func(vars map[string]string) kubeconfig.Environment {
		return kubeconfig.Environment{Getenv: func(k string) string { return vars[k] }, HomeDir: home, ServiceAccountDir: sa}
	}
	inCluster := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	cases := []struct {
		name     string
		flag     string
		context  string
		vars     map[string]string
		wantHost string
		wantNS   string
		wantErr  string
	}{
		{name: "flag wins", flag: flagFile, vars: map[string]string{"KUBECONFIG": envA}, wantHost: "https://flag", wantNS: "f"},
		{name: "KUBECONFIG skips missing files", vars: map[string]string{"KUBECONFIG": filepath.Join(dir, "none") + string(os.PathListSeparator) + envA}, wantHost: "https://env-a", wantNS: "a"},
		{name: "KUBECONFIG merges files", context: "o", vars: map[string]string{"KUBECONFIG": envA + string(os.PathListSeparator) + envB}, wantHost: "https://other", wantNS: "default"},
		{name: "KUBECONFIG all missing", vars: map[string]string{"KUBECONFIG": filepath.Join(dir, "none")}, wantErr: "none of the files exist"},
		{name: "in-cluster beats home", vars: inCluster, wantHost: "https://10.0.0.1:443", wantNS: "pod-ns"},
		{name: "home", vars: nil, wantHost: "https://home", wantNS: "h"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, ns, err := envOf(tc.vars).Load(tc.flag, tc.context)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.wantHost || ns != tc.wantNS {
				t.Fatalf("host %q ns %q, want %q %q", cfg.Host, ns, tc.wantHost, tc.wantNS)
			}
		})
	}

	t.Run("in-cluster details", func(t *testing.T) {
		t.Parallel()
		cfg, _, err := envOf(inCluster).InCluster()
		if err != nil {
			t.Fatal(err)
		}
		want := &rest.Config{Host: "https://10.0.0.1:443", BearerTokenFile: filepath.Join(sa, "token"), TLS: rest.TLSConfig{CAFile: filepath.Join(sa, "ca.crt")}}
		if diff := cmp.Diff(want, cfg); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		env := envOf(inCluster)
		env.ServiceAccountDir = filepath.Join(dir, "no-sa")
		if _, _, err := env.InCluster(); err == nil || !strings.Contains(err.Error(), "service account token") {
			t.Fatalf("missing token: %v", err)
		}
	})
	t.Run("nothing found", func(t *testing.T) {
		t.Parallel()
		env := kubeconfig.Environment{Getenv: func(string) string { return "" }, HomeDir: filepath.Join(dir, "empty")}
		if _, _, err := env.Load("", ""); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLoadKubeconfigServersExtension(t *testing.T) {
	t.Parallel()
	path := write(t, filepath.Join(t.TempDir(), "config"), `apiVersion: v1
kind: Config
current-context: ha
clusters:
- name: ha
  cluster:
    server: https://10.0.0.1:6443
    extensions:
    - name: other.example.com
      extension: {foo: bar}
    - name: servers.converge.dev
      extension:
        apiVersion: converge.dev/v1
        kind: Servers
        servers: [https://10.0.0.2:6443, https://10.0.0.3:6443]
contexts:
- name: ha
  context: {cluster: ha}
`)
	cfg, _, err := kubeconfig.LoadKubeconfig(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:6443" {
		t.Errorf("Host = %s", cfg.Host)
	}
	if diff := cmp.Diff([]string{"https://10.0.0.2:6443", "https://10.0.0.3:6443"}, cfg.Hosts); diff != "" {
		t.Errorf("Hosts (-want +got):\n%s", diff)
	}
	ext := kubeconfig.NewServersExtension([]string{"https://a:1"})
	if ext.Name != kubeconfig.ServersExtension || !strings.Contains(string(ext.Extension), `"servers":["https://a:1"]`) {
		t.Errorf("NewServersExtension = %s %s", ext.Name, ext.Extension)
	}
}
