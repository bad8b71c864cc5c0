package cli

import (
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

// TestSplitControllerManagerRunsWhatUpRuns: `converge controller-manager`,
// with its default flags on the machine of a secure `converge up` (the CA in
// <data-dir>/pki), sets up exactly the controllers the bundled control plane
// runs, CSR approval and signing and the root CA publisher included.
func TestSplitControllerManagerRunsWhatUpRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{DataDir: dir, NoFsync: true, Secure: true,
		CompactionInterval: -1, Controllers: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	kc := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := kubeconfig.DefaultEnvironment().Load(kc, "")
	if err != nil {
		t.Fatal(err)
	}

	f := &controllerManagerFlags{}
	fs := pflag.NewFlagSet("controller-manager", pflag.ContinueOnError)
	f.add(fs)
	// The defaults point at ~/.converge/pki; this test's CA is in dir/pki, as
	// the defaults would find it for a control plane on the default data dir.
	if err := fs.Parse([]string{"--leader-elect=false", "--metrics-bind-address=", "--health-probe-bind-address=",
		"--cluster-signing-cert-file", filepath.Join(dir, "pki", "ca.crt"),
		"--cluster-signing-key-file", filepath.Join(dir, "pki", "ca.key")}); err != nil {
		t.Fatal(err)
	}
	o, err := f.options(cfg, logr.Discard(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Sign == nil || len(o.RootCA) == 0 {
		t.Fatalf("split controller manager: signer %v, root CA %d bytes; want both", o.Sign != nil, len(o.RootCA))
	}
	_, split, err := controlplane.NewControllerManager(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if up := cp.Controllers(); !slices.Equal(split, up) {
		t.Errorf("controller-manager sets up %v\nconverge up runs       %v", split, up)
	}
	if !slices.Equal(split, controlplane.ControllerNames()) {
		t.Errorf("on a secure cluster every controller should run: %v, want %v", split, controlplane.ControllerNames())
	}
}

// TestControllerManagerWithoutCAKey: a controller manager whose default
// signing files are missing still approves (no signer, a warning); files the
// user names must load.
func TestControllerManagerWithoutCAKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if ca, err := signingCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"), false); err != nil || ca != nil {
		t.Errorf("missing default files: %v, %v; want no signer and no error", ca, err)
	}
	if _, err := signingCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"), true); err == nil {
		t.Error("missing named files: no error")
	}
}
