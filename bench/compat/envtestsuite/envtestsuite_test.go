package envtestsuite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnvtestSuiteUnderConvergeTestenv(t *testing.T) {
	tmp := t.TempDir()
	converge := filepath.Join(tmp, "converge")
	env := append(os.Environ(), "GOWORK=off")
	run := func(dir string, extra []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir, cmd.Env = dir, append(env, extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	start := time.Now()
	run(".", nil, "go", "build", "-o", converge, "github.com/converge-dev/converge/cmd/converge")
	t.Logf("built converge in %s", time.Since(start).Round(time.Millisecond))

	crds := filepath.Join(tmp, "crd")
	run(".", nil, converge, "operator", "generate", "./testdata/memcached/...", "--crd-dir", crds, "--rbac-dir", filepath.Join(tmp, "rbac"))
	// Compile the suite first so that the timing below is the run's.
	run(".", nil, "go", "test", "-count=1", "-exec", "/bin/true", "./testdata/memcached/...")
	// On its own, envtest looks for kube-apiserver and etcd binaries, which
	// this machine does not have: the suite is the unmodified envtest one.
	alone := exec.CommandContext(t.Context(), "go", "test", "-count=1", "./testdata/memcached/...")
	alone.Env = append(env, "CRD_DIR="+crds, "USE_EXISTING_CLUSTER=", "KUBEBUILDER_ASSETS="+filepath.Join(tmp, "none"))
	if out, err := alone.CombinedOutput(); err == nil || !strings.Contains(string(out), "unable to start control plane") {
		t.Fatalf("the suite ran without converge testenv: %v\n%s", err, out)
	}

	start = time.Now()
	out := run(".", []string{"CRD_DIR=" + crds}, converge, "testenv", "--crd-dir", crds, "--",
		"go", "test", "-count=1", "-v", "./testdata/memcached/...")
	t.Logf("converge testenv -- go test: %s\n%s", time.Since(start).Round(time.Millisecond), out)
	if !strings.Contains(out, "--- PASS: TestMemcachedBecomesAvailable") || !strings.Contains(out, "ok  \tgithub.com/converge-dev/converge/bench/compat/envtestsuite/testdata/memcached/controller") {
		t.Fatalf("the envtest suite did not pass:\n%s", out)
	}
}
