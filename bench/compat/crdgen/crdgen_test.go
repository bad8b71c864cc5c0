package crdgen_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/bench/compat/crdgen"
	"github.com/converge-dev/converge/operators/generate"
	"github.com/converge-dev/converge/operators/scaffold"
)

// TestGenerateMatchesControllerGen runs controller-gen and `converge operator
// generate` over the same corpus and requires the same CRDs and roles, key
// order aside (both are compared as parsed YAML). The only normalisation is
// controller-gen's version annotation.
func TestGenerateMatchesControllerGen(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")

	// controller-gen, built from the version this module's go.mod pins.
	start := time.Now()
	cg := filepath.Join(tmp, "controller-gen")
	run(t, ".", env, "go", "build", "-o", cg, "sigs.k8s.io/controller-tools/cmd/controller-gen")
	t.Logf("built controller-gen in %s", time.Since(start).Round(time.Millisecond))

	// The corpus module.
	corpus := filepath.Join(tmp, "corpus")
	sum, err := os.ReadFile(filepath.Join(root, "bench", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(corpus, "go.mod"), "module corpus.example\n\ngo 1.26.6\n\nrequire (\n\tk8s.io/api v0.37.2\n\tk8s.io/apimachinery v0.37.2\n)\n")
	write(t, filepath.Join(corpus, "go.sum"), string(sum))
	for _, d := range []string{"everything/v1", "everything/v2"} {
		if err := crdgen.TranslateDir(filepath.Join(root, "operators/generate/testdata", d), filepath.Join(corpus, d)); err != nil {
			t.Fatal(err)
		}
	}
	translateFile(t, filepath.Join(root, "operators/postgres/types.go"), filepath.Join(corpus, "postgres/types.go"))
	scaf := filepath.Join(tmp, "memcached")
	if _, err := scaffold.Init(scaffold.Options{Dir: scaf, Name: "memcached", Group: "cache.example.com", Version: "v1alpha1",
		Kind: "Memcached", ConvergeSource: root}); err != nil {
		t.Fatal(err)
	}
	translateFile(t, filepath.Join(scaf, "api/v1alpha1/types.go"), filepath.Join(corpus, "memcached/v1alpha1/types.go"))
	run(t, corpus, env, "go", "mod", "tidy")

	cgOut, ourOut := filepath.Join(tmp, "controller-gen-out"), filepath.Join(tmp, "converge-out")
	start = time.Now()
	run(t, corpus, env, cg, "crd", "rbac:roleName=manager-role", "paths=./...",
		"output:crd:dir="+filepath.Join(cgOut, "crd"), "output:rbac:dir="+filepath.Join(cgOut, "rbac"))
	t.Logf("controller-gen: %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	res, err := generate.Generate(t.Context(), generate.Options{Dir: corpus, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Write(filepath.Join(ourOut, "crd"), filepath.Join(ourOut, "rbac")); err != nil {
		t.Fatal(err)
	}
	t.Logf("converge operator generate: %s", time.Since(start).Round(time.Millisecond))

	cgFiles, ourFiles := list(t, cgOut), list(t, ourOut)
	if !slices.Equal(cgFiles, ourFiles) {
		t.Fatalf("files differ:\ncontroller-gen: %v\n      converge: %v", cgFiles, ourFiles)
	}
	if len(cgFiles) < 6 {
		t.Fatalf("only %v generated", cgFiles)
	}
	for _, f := range cgFiles {
		want, got := docs(t, filepath.Join(cgOut, f)), docs(t, filepath.Join(ourOut, f))
		if len(want) != len(got) {
			t.Errorf("%s: %d documents from controller-gen, %d from converge", f, len(want), len(got))
			continue
		}
		for i := range want {
			var diffs []string
			diff("", want[i], got[i], &diffs)
			if len(diffs) > 0 {
				t.Errorf("%s document %d differs (controller-gen → converge):\n%s", f, i, strings.Join(diffs, "\n"))
			}
		}
	}
	t.Logf("compared %d files: %v", len(cgFiles), cgFiles)
}

func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func translateFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	out, err := crdgen.Translate(src)
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	write(t, to, string(out))
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// docs parses a YAML stream, dropping controller-gen's version annotation.
func docs(t *testing.T, path string) []any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, d := range bytes.Split(raw, []byte("\n---\n")) {
		d = bytes.TrimPrefix(d, []byte("---\n"))
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		var v map[string]any
		if err := yaml.Unmarshal(d, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if meta, ok := v["metadata"].(map[string]any); ok {
			if ann, ok := meta["annotations"].(map[string]any); ok {
				delete(ann, "controller-gen.kubebuilder.io/version")
				if len(ann) == 0 {
					delete(meta, "annotations")
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// diff lists the paths where a and b differ.
func diff(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diff(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diff(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("  %s: %s → %s", path, short(a), short(b)))
	}
}

func short(v any) string {
	if v == nil {
		return "(absent)"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
