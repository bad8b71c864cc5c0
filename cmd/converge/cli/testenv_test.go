package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
)

// The test binary doubles as the child program of converge testenv: a
// small client of the framework that uses the environment it is given.
const testenvChildEnv = "CONVERGE_TESTENV_CHILD"

// With convergeMainEnv set, the test binary is converge itself (the
// per-package runner calls it back through go test -exec).
const convergeMainEnv = "CONVERGE_TEST_AS_CONVERGE"

func TestMain(m *testing.M) {
	if os.Getenv(convergeMainEnv) != "" {
		os.Exit(Execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	if os.Getenv(testenvChildEnv) != "" {
		os.Exit(testenvChild())
	}
	os.Exit(m.Run())
}

// testenvChild checks the environment, creates a Widget of the CRD that
// testenv applied, reads it back and exits with $CONVERGE_TESTENV_CHILD.
func testenvChild() int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "child: "+format+"\n", args...)
		return 99
	}
	if os.Getenv("USE_EXISTING_CLUSTER") != "true" {
		return fail("USE_EXISTING_CLUSTER=%q", os.Getenv("USE_EXISTING_CLUSTER"))
	}
	cfg, _, err := kubeconfig.LoadKubeconfig(os.Getenv("KUBECONFIG"), "")
	if err != nil {
		return fail("kubeconfig: %v", err)
	}
	if !strings.HasPrefix(cfg.Host, "https://") {
		return fail("not secure: %s", cfg.Host)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return fail("client: %v", err)
	}
	ctx := context.Background()
	w := &api.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w1"}, "spec": map[string]any{"size": 3}}}
	if err := c.Create(ctx, w); err != nil {
		return fail("create widget: %v", err)
	}
	got := &api.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "w1"}, got); err != nil {
		return fail("get widget: %v", err)
	}
	fmt.Printf("child: widget %s size %v\n", got.GetName(), api.NestedMap(got.Object, "spec")["size"])
	code, _ := strconv.Atoi(os.Getenv(testenvChildEnv))
	return code
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
`

func crdDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// A kustomization (not a CRD) next to the CRD is skipped, as in
	// kubebuilder's config/crd.
	for name, content := range map[string]string{
		"bases/example.com_widgets.yaml": "---\n" + widgetCRD,
		"kustomization.yaml":             "resources:\n- bases/example.com_widgets.yaml\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTestenvRunsTheCommand(t *testing.T) {
	dir := crdDir(t)
	for _, code := range []int{0, 7} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Setenv(testenvChildEnv, strconv.Itoa(code))
			var out, errOut strings.Builder
			g := &globalOptions{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: os.Getenv}
			start := time.Now()
			got := execute(t.Context(), g, []string{"testenv", "--crd-dir", dir, "--", os.Args[0]})
			t.Logf("testenv + child took %s", time.Since(start).Round(time.Millisecond))
			if got != code {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", got, code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "child: widget w1 size 3") {
				t.Fatalf("child output %q", out.String())
			}
			if !strings.Contains(errOut.String(), "1 CRDs established") {
				t.Errorf("stderr %q", errOut.String())
			}
		})
	}
	// A command that cannot start, and no command at all.
	g := &globalOptions{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: os.Getenv}
	if got := execute(t.Context(), g, []string{"testenv", "--", "/nonexistent/program"}); got != 1 {
		t.Errorf("missing program: exit %d, want 1", got)
	}
	if got := execute(t.Context(), g, []string{"testenv"}); got != 1 {
		t.Errorf("no command: exit %d, want 1", got)
	}
}

func TestTestenvPrintEnv(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	g := &globalOptions{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard, getenv: os.Getenv}
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, g, []string{"testenv", "--print-env", "--crd-dir", crdDir(t)})
		_ = pw.Close()
	}()
	env := map[string]string{}
	sc := bufio.NewScanner(pr)
	for len(env) < 2 && sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		env[k] = v
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if env["USE_EXISTING_CLUSTER"] != "true" || env["KUBECONFIG"] == "" {
		t.Fatalf("printed %v", env)
	}
	// The control plane keeps running: the child program works against it.
	t.Setenv("KUBECONFIG", env["KUBECONFIG"])
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	t.Setenv(testenvChildEnv, "0")
	if code := testenvChild(); code != 0 {
		t.Fatalf("client against --print-env's control plane: %d", code)
	}
	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after Ctrl-C", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("testenv --print-env did not stop")
	}
	if _, err := os.Stat(filepath.Dir(env["KUBECONFIG"])); !os.IsNotExist(err) {
		t.Errorf("data dir left behind: %v", err)
	}
}

// TestTestenvPerPackage runs go test over a module of two packages with one
// control plane each (the default for go test): each test sees its own
// kubeconfig, and a failing package fails the run; with --per-package=false
// both see the same.
func TestTestenvPerPackage(t *testing.T) {
	mod := t.TempDir()
	files := map[string]string{
		"go.mod":      "module pp\n\ngo 1.26\n",
		"a/a_test.go": perPackageTest, "b/b_test.go": strings.Replace(perPackageTest, "package a", "package b", 1),
	}
	for name, content := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seen := filepath.Join(t.TempDir(), "seen")
	t.Setenv("PP_SEEN", seen)
	t.Setenv(convergeMainEnv, "1")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Chdir(mod)
	var out strings.Builder
	g := &globalOptions{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: os.Getenv}
	start := time.Now()
	code := execute(t.Context(), g, []string{"testenv", "--controllers", "", "--crd-dir", crdDir(t),
		"--converge-binary", os.Args[0], "--", "go", "test", "-count=1", "./..."})
	t.Logf("two packages, two control planes: %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	raw, _ := os.ReadFile(seen)
	lines := strings.Fields(string(raw))
	if len(lines) != 2 || lines[0] == lines[1] {
		t.Fatalf("kubeconfigs seen by the packages: %q\n%s", lines, out.String())
	}
	if err := os.Remove(seen); err != nil {
		t.Fatal(err)
	}
	if code := execute(t.Context(), g, []string{"testenv", "--per-package=false", "--controllers", "", "--",
		"go", "test", "-count=1", "./..."}); code != 0 {
		t.Fatalf("--per-package=false: exit %d\n%s", code, out.String())
	}
	raw, _ = os.ReadFile(seen)
	if lines := strings.Fields(string(raw)); len(lines) != 2 || lines[0] != lines[1] {
		t.Fatalf("--per-package=false: kubeconfigs seen by the packages: %q\n%s", lines, out.String())
	}
	t.Setenv("PP_FAIL", "1")
	out.Reset()
	if code := execute(t.Context(), g, []string{"testenv", "--per-package", "--converge-binary", os.Args[0], "--",
		"go", "test", "-count=1", "./..."}); code != 1 {
		t.Fatalf("a failing package: exit %d\n%s", code, out.String())
	}
	if got := execute(t.Context(), g, []string{"testenv", "--per-package", "--", "make", "test"}); got != 1 {
		t.Errorf("--per-package with make: exit %d, want 1", got)
	}
}

func TestDefaultPerPackage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"go", "test", "./..."}, true},
		{[]string{"/usr/local/go/bin/go", "test", "-v", "-count=1", "./internal/..."}, true},
		{[]string{"go", "test", "./...", "-args", "-exec"}, true},
		{[]string{"go", "test", "-exec", "sudo", "./..."}, false},
		{[]string{"go", "test", "-exec=sudo", "./..."}, false},
		{[]string{"go", "vet", "./..."}, false},
		{[]string{"go"}, false},
		{[]string{"make", "test"}, false},
		{[]string{"./suite.test", "-test.v"}, false},
	} {
		if got := defaultPerPackage(tc.args); got != tc.want {
			t.Errorf("defaultPerPackage(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

const perPackageTest = `package a

import (
	"os"
	"testing"
)

func TestEnv(t *testing.T) {
	kc := os.Getenv("KUBECONFIG")
	if _, err := os.Stat(kc); err != nil || os.Getenv("USE_EXISTING_CLUSTER") != "true" {
		t.Fatalf("KUBECONFIG %q: %v", kc, err)
	}
	if os.Getenv("PP_FAIL") != "" {
		t.Fatal("asked to fail")
	}
	f, err := os.OpenFile(os.Getenv("PP_SEEN"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(kc + "\n"); err != nil {
		t.Fatal(err)
	}
}
`
