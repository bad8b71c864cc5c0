package operator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s", dir)
	}
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPluginBuiltByConvergeLoadsIntoConvergeUp builds converge, builds the sample
// operator with `converge operator build`, starts `converge up --operator` and
// checks that a Greeting is reconciled, then that a plugin from elsewhere is
// refused without stopping the control plane.
func TestPluginBuiltByConvergeLoadsIntoConvergeUp(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "converge")
	run(t, root, []string{"CGO_ENABLED=1"}, "go", "build", "-o", bin, "./cmd/converge")
	so := filepath.Join(tmp, "greeting.so")
	out := run(t, root, []string{"CONVERGE_SRC=" + root}, bin, "operator", "build", "./operators/examples/greeting/plugin", "-o", so)
	if !strings.Contains(out, "Built ") {
		t.Fatalf("operator build output: %s", out)
	}
	// A file that is not a plugin of this binary must be refused, not crash converge.
	bogus := filepath.Join(tmp, "bogus.so")
	if err := os.WriteFile(bogus, []byte("not a plugin"), 0o644); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	dataDir := filepath.Join(tmp, "data")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	up := exec.CommandContext(ctx, bin, "up", "--data-dir", dataDir, "--port", strconv.Itoa(port), "--operator", so, "--operator", bogus)
	up.Cancel = func() error { return up.Process.Signal(syscall.SIGTERM) }
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	up.Stderr = io.Discard
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = up.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	deadline := time.After(90 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("converge up exited:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if strings.Contains(l, "is ready at") {
				break wait
			}
		case <-deadline:
			t.Fatalf("converge up not ready:\n%s", strings.Join(seen, "\n"))
		}
	}
	all := strings.Join(seen, "\n")
	if !strings.Contains(all, "✓ operator greeting") {
		t.Errorf("greeting operator not reported running:\n%s", all)
	}
	if !strings.Contains(all, "✗ operator") || !strings.Contains(all, "bogus.so") {
		t.Errorf("bogus plugin not reported as failed:\n%s", all)
	}

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cr := `{"apiVersion":"examples.converge.dev/v1alpha1","kind":"Greeting","metadata":{"name":"hello","namespace":"default"},"spec":{"message":"hi"}}`
	resp, err := http.Post(base+"/apis/examples.converge.dev/v1alpha1/namespaces/default/greetings", "application/json", strings.NewReader(cr))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create Greeting: %d %s", resp.StatusCode, body)
	}
	until := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/api/v1/namespaces/default/configmaps/greeting-hello")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if !strings.Contains(string(b), `"kind":"Greeting"`) {
					t.Errorf("ConfigMap has no owner reference to the Greeting: %s", b)
				}
				break
			}
		}
		if time.Now().After(until) {
			t.Fatalf("the greeting operator did not create its ConfigMap")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The control plane keeps serving after the failed plugin.
	if resp, err := http.Get(base + "/readyz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz after operator failure: %v", err)
	}
}
