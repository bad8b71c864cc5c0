package scaffold_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/converge-dev/converge/operators/generate"
	"github.com/converge-dev/converge/operators/scaffold"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestPlural(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]string{"Memcached": "memcacheds", "Policy": "policies", "Gateway": "gateways",
		"Ingress": "ingresses", "Box": "boxes", "Backup": "backups"} {
		if got := scaffold.Plural(kind); got != want {
			t.Errorf("Plural(%s) = %s, want %s", kind, got, want)
		}
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	_, err := scaffold.Init(scaffold.Options{Dir: t.TempDir(), Name: "Bad_Name", Group: "nodot", Version: "1", Kind: "lower",
		ConvergeVersion: "v1.0.0"})
	for _, want := range []string{"name", "--group", "--version", "--kind"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Init error %v does not mention %s", err, want)
		}
	}
}

// TestDefaultVersionsMatchGoMod keeps the fallback versions equal to Converge's.
func TestDefaultVersionsMatchGoMod(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for mod, v := range scaffold.DefaultVersions {
		if !strings.Contains(string(data), "\t"+mod+" "+v+"\n") {
			t.Errorf("DefaultVersions[%s] = %s, not what go.mod requires", mod, v)
		}
	}
}

// TestInitBuildsAndPasses scaffolds an operator and runs its own checks
// (go vet, gofmt, go test ./...: the CRD sync test and the Ginkgo suite on
// testenv) with Converge replaced by this source tree.
func TestInitBuildsAndPasses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memcached")
	files, err := scaffold.Init(scaffold.Options{Dir: dir, Name: "memcached", Group: "cache.example.com", Version: "v1alpha1",
		Kind: "Memcached", ConvergeSource: repoRoot(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("Init wrote %v", files)
	}
	if _, err := scaffold.Init(scaffold.Options{Dir: dir, Name: "memcached", Group: "cache.example.com", Version: "v1alpha1",
		Kind: "Memcached", ConvergeSource: repoRoot(t)}); err == nil {
		t.Error("Init overwrote a non-empty directory")
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	for _, args := range [][]string{{"go", "vet", "./..."}, {"gofmt", "-l", "."}, {"go", "test", "-count=1", "./..."}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil || (args[0] == "gofmt" && len(out) > 0) {
			t.Fatalf("%s in the scaffolded module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	// crd.yaml is what `make manifests` (converge operator generate) writes
	// from the types' markers: regenerating right after init changes nothing.
	res, err := generate.Generate(t.Context(), generate.Options{Dir: dir, Env: env})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	outDir := t.TempDir()
	if _, err := res.Write(filepath.Join(outDir, "crd"), filepath.Join(outDir, "rbac")); err != nil {
		t.Fatal(err)
	}
	gen, _ := os.ReadFile(filepath.Join(outDir, "crd", "cache.example.com_memcacheds.yaml"))
	have, _ := os.ReadFile(filepath.Join(dir, "api", "v1alpha1", "crd.yaml"))
	if string(gen) != string(have) {
		t.Errorf("crd.yaml differs from the generated CRD:\n--- crd.yaml\n%s\n--- generated\n%s", have, gen)
	}
	if role, _ := os.ReadFile(filepath.Join(outDir, "rbac", "role.yaml")); !strings.Contains(string(role), "memcacheds/finalizers") {
		t.Errorf("role.yaml lacks the +kubebuilder:rbac rules of the controller:\n%s", role)
	}

	// The sync test catches a field added to the types but not to crd.yaml.
	types := filepath.Join(dir, "api", "v1alpha1", "types.go")
	src, _ := os.ReadFile(types)
	edited := strings.Replace(string(src), "\tMessage string `json:\"message,omitempty\"`",
		"\tMessage string `json:\"message,omitempty\"`\n\tReplicas int32 `json:\"replicas,omitempty\"`", 1)
	if err := os.WriteFile(types, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestCRDMatchesTypes", "./api/...")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "spec.replicas: missing from crd.yaml") {
		t.Fatalf("the CRD sync test did not catch a new field: %v\n%s", err, out)
	}
}
