package cli

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/security/bootstrap"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
)

// TestCertsRotateAndTokenCreate: on a secure control plane, `token create
// --print-join-command` prints a join command whose hash pins the CA, and
// `certs rotate` renews the serving and admin certificates, keeping the CA and
// the serving certificate's names, and rewrites the kubeconfig.
func TestCertsRotateAndTokenCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{DataDir: dir, NoFsync: true, Secure: true, CompactionInterval: -1,
		ExtraSANs: []string{"cv.example.com", "10.9.8.7"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	kc := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result {
		var out, errOut syncBuffer
		g := &globalOptions{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
		code := execute(context.WithoutCancel(t.Context()), g, args)
		return result{code: code, stdout: out.String(), stderr: errOut.String()}
	}

	r := run("token", "create", "--kubeconfig", kc, "--print-join-command")
	if r.code != 0 {
		t.Fatalf("token create: %s", r)
	}
	p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki"), ExtraSANs: []string{"cv.example.com", "10.9.8.7"}})
	if err != nil {
		t.Fatal(err)
	}
	hash, err := bootstrap.CACertHash(p.CAPEM())
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(r.stdout)
	if len(f) != 8 || f[3] != cp.URL() || f[7] != hash {
		t.Fatalf("join command %q: want server %s and hash %s", r.stdout, cp.URL(), hash)
	}
	if _, _, err := bootstrap.Parse(f[5]); err != nil {
		t.Fatal(err)
	}
	if r := run("get", "secrets", "-n", "kube-system", "--kubeconfig", kc); r.code != 0 || !strings.Contains(r.stdout, "bootstrap-token-") {
		t.Fatalf("the token's Secret is not listed: %s", r)
	}

	oldServing, err := readCert(filepath.Join(dir, "pki", pki.ServingCertFile))
	if err != nil {
		t.Fatal(err)
	}
	oldAdmin, _ := p.AdminCredentials()
	r = run("certs", "rotate", "--data-dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "rewrote") {
		t.Fatalf("certs rotate: %s", r)
	}
	serving, err := readCert(filepath.Join(dir, "pki", pki.ServingCertFile))
	if err != nil {
		t.Fatal(err)
	}
	if serving.SerialNumber.Cmp(oldServing.SerialNumber) == 0 {
		t.Fatal("serving certificate not renewed")
	}
	if !strings.Contains(strings.Join(serving.DNSNames, ","), "cv.example.com") || len(serving.IPAddresses) != len(oldServing.IPAddresses) {
		t.Fatalf("renewed serving certificate lost names: %v %v", serving.DNSNames, serving.IPAddresses)
	}
	p2, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki"), ExtraSANs: []string{"cv.example.com", "10.9.8.7"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(p2.CAPEM()) != string(p.CAPEM()) {
		t.Fatal("the CA changed")
	}
	newAdmin, newKey := p2.AdminCredentials()
	if string(newAdmin) == string(oldAdmin) {
		t.Fatal("admin certificate not renewed")
	}
	if _, err := tls.X509KeyPair(newAdmin, newKey); err != nil {
		t.Fatal(err)
	}
	// The rewritten kubeconfig (new admin certificate) still works.
	if r := run("get", "namespaces", "--kubeconfig", kc); r.code != 0 || !strings.Contains(r.stdout, "kube-system") {
		t.Fatalf("kubeconfig after rotation: %s", r)
	}
	if r := run("certs", "rotate", "--data-dir", t.TempDir()); r.code == 0 || !strings.Contains(r.stderr, "--insecure") {
		t.Fatalf("rotate without a CA: %s", r)
	}
}
