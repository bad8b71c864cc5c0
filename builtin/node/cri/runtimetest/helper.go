package runtimetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

var helperOnce struct {
	sync.Mutex
	path string
}

// TB is the part of testing.TB BuildHelper needs (Ginkgo's GinkgoT() has it).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// BuildHelper compiles the helper (a static binary, CGO_ENABLED=0) once per
// test process and returns its path. It fails the test when the go tool is
// missing or the build fails.
func BuildHelper(t TB) string {
	t.Helper()
	helperOnce.Lock()
	defer helperOnce.Unlock()
	if helperOnce.path != "" {
		if _, err := os.Stat(helperOnce.path); err == nil {
			return helperOnce.path
		}
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("build conformance helper: the go tool is required: %v", err)
	}
	// A directory outside t.TempDir so the binary outlives the first test; it is
	// small and goes away with the machine's temp dir.
	dir, err := os.MkdirTemp("", "converge-rt-helper-")
	if err != nil {
		t.Fatalf("build conformance helper: %v", err)
	}
	out := filepath.Join(dir, "helper")
	cmd := exec.Command(gobin, "build", "-o", out, "github.com/converge-dev/converge/builtin/node/cri/runtimetest/helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build conformance helper: %v\n%s", err, b)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("build conformance helper: %v", err)
	}
	helperOnce.path = out
	return out
}
