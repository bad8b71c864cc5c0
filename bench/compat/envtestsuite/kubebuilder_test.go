//go:build kubebuilder

package envtestsuite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestKubebuilderProject is the acceptance: a project scaffolded by
// kubebuilder v4 (`kubebuilder init` + `create api` for v1alpha1 and v1 +
// `create webhook --defaulting --programmatic-validation --conversion`,
// kubebuilder installed from sigs.k8s.io/kubebuilder/v4) gets its CRD and role
// from `converge operator generate` (equal to what its own `make manifests`
// writes with controller-gen) and its generated envtest suites, the
// controller's and the webhook's, run unchanged under `converge testenv -- go
// test ./...`. The webhook suite's envtest installs the webhook configurations
// of config/webhook and the CRD's conversion webhook, pointing at the suite's
// own webhook server on 127.0.0.1 with its own CA; specs this test adds
// (testdata/kubebuilder) send objects through the API server to the webhooks,
// whose logic it writes where the scaffold says TODO. Run with `make
// kubebuilder-accept` (several minutes: it installs kubebuilder and the
// project's tools); not part of make compat. With ENVTEST_ASSETS (`make
// envtest-compare`), it also times the webhook suite under envtest with
// kube-apiserver and etcd and under converge testenv.
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
	run(proj, kb, "create", "api", "--group", "cache", "--version", "v1", "--kind", "Memcached", "--resource", "--controller=false")
	run(proj, kb, "create", "webhook", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached",
		"--defaulting", "--programmatic-validation", "--conversion", "--spoke", "v1")
	writeWebhookLogic(t, proj)

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
	run(proj, "go", "test", "-count=1", "-exec", "/bin/true", "./...")
	out := run(proj, converge, "testenv", "--crd-dir", "config/crd/bases", "--", "go", "test", "-count=1", "-v", "./...")
	for _, want := range []string{
		"--- PASS: TestControllers", "ok  \texample.com/memcached/internal/controller",
		"--- PASS: TestAPIs", "Ran 3 of 3 Specs", "ok  \texample.com/memcached/internal/webhook/v1alpha1",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the kubebuilder suites did not pass (no %q):\n%s", want, out)
		}
	}
	if assets := os.Getenv("ENVTEST_ASSETS"); assets != "" {
		webhookWallTimes(t, proj, converge, assets)
	}
}

// writeWebhookLogic fills in what kubebuilder leaves to the user: the
// defaulting webhook sets spec.foo, the validating one refuses foo=bad, the
// v1 spoke's conversion copies spec.foo and marks the objects it converted
// from the hub; and adds the specs of testdata/kubebuilder to the webhook
// suite.
func writeWebhookLogic(t *testing.T, proj string) {
	t.Helper()
	edit := func(file string, repl ...string) {
		t.Helper()
		p := filepath.Join(proj, file)
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(raw)
		for i := 0; i < len(repl); i += 2 {
			if !strings.Contains(s, repl[i]) {
				t.Fatalf("%s: the scaffold no longer has %q", file, repl[i])
			}
			s = strings.Replace(s, repl[i], repl[i+1], 1)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("internal/webhook/v1alpha1/memcached_webhook.go",
		"import (\n\t\"context\"\n", "import (\n\t\"context\"\n\t\"fmt\"\n",
		"\t// TODO(user): fill in your defaulting logic.\n",
		"\tif obj.Spec.Foo == nil {\n\t\tfoo := \"defaulted\"\n\t\tobj.Spec.Foo = &foo\n\t}\n",
		"\t// TODO(user): fill in your validation logic upon object creation.\n",
		"\tif obj.Spec.Foo != nil && *obj.Spec.Foo == \"bad\" {\n\t\treturn nil, fmt.Errorf(\"spec.foo must not be %q\", *obj.Spec.Foo)\n\t}\n")
	edit("api/v1/memcached_conversion.go",
		// ConvertTo (v1 to the hub), then ConvertFrom.
		"\tdst.ObjectMeta = src.ObjectMeta\n", "\tdst.ObjectMeta = src.ObjectMeta\n\tdst.Spec.Foo = src.Spec.Foo\n",
		"\tdst.ObjectMeta = src.ObjectMeta\n\n", "\tdst.ObjectMeta = *src.ObjectMeta.DeepCopy()\n\tdst.Spec.Foo = src.Spec.Foo\n"+
			"\tif dst.Annotations == nil {\n\t\tdst.Annotations = map[string]string{}\n\t}\n\tdst.Annotations[\"converted-by\"] = \"webhook\"\n\n")
	specs, err := os.ReadFile("testdata/kubebuilder/webhook_api_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "internal/webhook/v1alpha1/webhook_api_test.go"), specs, 0o644); err != nil {
		t.Fatal(err)
	}
}

// webhookWallTimes runs the webhook suite's test binary five times each way,
// from its package directory as go test would: under envtest with the
// kube-apiserver and etcd of assets, and under converge testenv; it logs the
// medians for docs/PERFORMANCE.md.
func webhookWallTimes(t *testing.T, proj, converge, assets string) {
	pkg := filepath.Join(proj, "internal/webhook/v1alpha1")
	suite := filepath.Join(t.TempDir(), "webhook.test")
	build := exec.CommandContext(t.Context(), "go", "test", "-c", "-o", suite, ".")
	build.Dir, build.Env = pkg, append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the webhook suite: %v\n%s", err, out)
	}
	timed := func(extra []string, name string, args ...string) time.Duration {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir, cmd.Env = pkg, append(os.Environ(), extra...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil || !strings.Contains(string(out), "Ran 3 of 3 Specs") {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return d
	}
	var withEnvtest, withConverge []time.Duration
	for range 5 {
		withEnvtest = append(withEnvtest, timed([]string{"KUBEBUILDER_ASSETS=" + assets, "USE_EXISTING_CLUSTER="}, suite))
		withConverge = append(withConverge, timed(nil, converge, "testenv", "--crd-dir", filepath.Join(proj, "config/crd/bases"), "--", suite))
	}
	median := func(ds []time.Duration) time.Duration { s := slices.Clone(ds); slices.Sort(s); return s[len(s)/2] }
	e, c := median(withEnvtest), median(withConverge)
	t.Logf("| kubebuilder webhook suite (1 CRD in 2 versions, defaulting + validating + conversion webhooks, 3 specs) | %s | %s | %.1f× |",
		e.Round(10*time.Millisecond), c.Round(10*time.Millisecond), e.Seconds()/c.Seconds())
	t.Logf("runs: envtest %v, converge %v", withEnvtest, withConverge)
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
