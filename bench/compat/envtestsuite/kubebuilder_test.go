//go:build kubebuilder

package envtestsuite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestKubebuilderProject is the acceptance: a project scaffolded by
// kubebuilder v4 (`kubebuilder init` + `create api`, kubebuilder installed
// from sigs.k8s.io/kubebuilder/v4) gets its CRD and role from `converge
// operator generate` (equal to what its own `make manifests` writes with
// controller-gen) and its generated envtest suite runs unchanged under
// `converge testenv`. Run with `make kubebuilder-accept` (several minutes:
// it installs kubebuilder and the project's tools); not part of make compat.
func TestKubebuilderProject(t *testing.T) {
	tmp := t.TempDir()
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOBIN="+filepath.Join(tmp, "bin"))
	run := func(dir, name string, args ...string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
		return string(out)
	}
	converge := filepath.Join(tmp, "converge")
	run(".", "go", "build", "-o", converge, "github.com/converge-dev/converge/cmd/converge")
	run(".", "go", "install", "sigs.k8s.io/kubebuilder/v4@v4.16.0")
	kb := filepath.Join(tmp, "bin", "kubebuilder")
	proj := filepath.Join(tmp, "memcached")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	run(proj, kb, "init", "--domain", "example.com", "--repo", "example.com/memcached")
	run(proj, kb, "create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached", "--resource", "--controller")

	// converge operator generate writes what controller-gen writes.
	run(proj, converge, "operator", "generate", "./...", "--crd-dir", filepath.Join(tmp, "converge-crd"), "--rbac-dir", filepath.Join(tmp, "converge-rbac"))
	run(proj, "make", "manifests")
	for _, f := range [][2]string{
		{"config/crd/bases/cache.example.com_memcacheds.yaml", "converge-crd/cache.example.com_memcacheds.yaml"},
		{"config/rbac/role.yaml", "converge-rbac/role.yaml"},
	} {
		want, got := readYAML(t, filepath.Join(proj, f[0])), readYAML(t, filepath.Join(tmp, f[1]))
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s differs from controller-gen's:\ncontroller-gen: %v\n      converge: %v", f[1], want, got)
		}
	}
	// The project's CRD is now ours; its envtest suite runs unchanged.
	if err := os.Rename(filepath.Join(tmp, "converge-crd", "cache.example.com_memcacheds.yaml"),
		filepath.Join(proj, "config/crd/bases/cache.example.com_memcacheds.yaml")); err != nil {
		t.Fatal(err)
	}
	run(proj, "go", "test", "-count=1", "-exec", "/bin/true", "./internal/...")
	out := run(proj, converge, "testenv", "--crd-dir", "config/crd/bases", "--", "go", "test", "-count=1", "-v", "./internal/...")
	if !strings.Contains(out, "--- PASS: TestControllers") || !strings.Contains(out, "1 Passed") {
		t.Fatalf("the kubebuilder suite did not pass:\n%s", out)
	}
}

// readYAML parses a YAML stream, dropping controller-gen's version
// annotation.
func readYAML(t *testing.T, path string) []any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []any
	for _, d := range strings.Split(string(raw), "\n---\n") {
		d = strings.TrimPrefix(d, "---\n")
		if strings.TrimSpace(d) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if meta, ok := m["metadata"].(map[string]any); ok {
			if ann, ok := meta["annotations"].(map[string]any); ok {
				delete(ann, "controller-gen.kubebuilder.io/version")
				if len(ann) == 0 {
					delete(meta, "annotations")
				}
			}
		}
		docs = append(docs, m)
	}
	return docs
}
