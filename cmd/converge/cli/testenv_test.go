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

func TestMain(m *testing.M) {
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
