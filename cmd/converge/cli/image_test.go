package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestImageBuildWritesAnArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := buildHello(t, dir)
	archive := filepath.Join(dir, "hello.tar")
	var out, errOut bytes.Buffer
	if code := Execute(t.Context(), []string{"image", "build", "--binary", bin, "--name", "hello", "-o", archive}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Built docker.io/library/hello:latest sha256:") {
		t.Errorf("output: %q", out.String())
	}
	if st, err := os.Stat(archive); err != nil || st.Size() == 0 {
		t.Fatalf("archive not written: %v", err)
	}
	if code := Execute(t.Context(), []string{"image", "build", "--name", "x"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "--binary") {
		t.Errorf("missing --binary accepted (exit %d): %s", code, errOut.String())
	}
}

// buildHello builds a static do-nothing program in dir and returns its path.
func buildHello(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build static binary: %v\n%s", err, out)
	}
	return bin
}
