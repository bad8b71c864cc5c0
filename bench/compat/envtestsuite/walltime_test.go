//go:build envtestcompare

package envtestsuite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEnvtestWallTimes runs the memcached envtest suite's test binary five
// times each way and prints the median wall times: envtest with kube-apiserver and etcd
// (ENVTEST_ASSETS, built by `make envtest-compare` from the k8s.io/kubernetes
// and go.etcd.io/etcd modules) and `converge testenv`. Run it with
// `make envtest-compare`; it is not part of make compat.
func TestEnvtestWallTimes(t *testing.T) {
	assets := os.Getenv("ENVTEST_ASSETS")
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			t.Fatalf("ENVTEST_ASSETS=%q lacks %s (make envtest-compare builds them): %v", assets, b, err)
		}
	}
	tmp := t.TempDir()
	converge := filepath.Join(tmp, "converge")
	env := append(os.Environ(), "GOWORK=off")
	run := func(extra []string, name string, args ...string) (string, time.Duration) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Env = append(env, extra...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out), time.Since(start)
	}
	run(nil, "go", "build", "-o", converge, "github.com/converge-dev/converge/cmd/converge")
	crds := filepath.Join(tmp, "crd")
	run(nil, converge, "operator", "generate", "./testdata/memcached/...", "--crd-dir", crds, "--rbac-dir", "")
	// The suite's test binary, built once: the times are those of the runs
	// (control plane start, CRD install, the test, teardown), not of go test.
	suite := filepath.Join(tmp, "controller.test")
	run(nil, "go", "test", "-c", "-o", suite, "./testdata/memcached/controller")
	const n = 5
	var withEnvtest, withConverge []time.Duration
	for range n {
		out, d := run([]string{"CRD_DIR=" + crds, "KUBEBUILDER_ASSETS=" + assets, "USE_EXISTING_CLUSTER="}, suite)
		if !strings.Contains(out, "PASS") {
			t.Fatalf("envtest run:\n%s", out)
		}
		withEnvtest = append(withEnvtest, d)
		out, d = run([]string{"CRD_DIR=" + crds}, converge, "testenv", "--crd-dir", crds, "--", suite)
		if !strings.Contains(out, "PASS") {
			t.Fatalf("converge testenv run:\n%s", out)
		}
		withConverge = append(withConverge, d)
	}
	median := func(ds []time.Duration) time.Duration { s := slices.Clone(ds); slices.Sort(s); return s[len(s)/2] }
	e, c := median(withEnvtest), median(withConverge)
	t.Logf("| suite | envtest (kube-apiserver + etcd) | converge testenv | ratio |")
	t.Logf("| memcached (1 CRD, 1 controller, 1 test) | %s | %s | %.1f× |", e.Round(10*time.Millisecond), c.Round(10*time.Millisecond),
		e.Seconds()/c.Seconds())
	t.Logf("runs: envtest %v, converge %v", withEnvtest, withConverge)
}
