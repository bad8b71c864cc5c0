package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/operators/loader"
)

func TestPrintOperators(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	printOperators(&out, []loader.Report{
		{Name: "greeting", State: loader.Running, Path: "/d/greeting.so", Build: "example.com/greeting@(devel) (go1.26.6)",
			Controllers: []loader.ControllerStats{{Name: "greeting", Reconciles: 12, Errors: 1, Rate: 0.5,
				LastError: `configmaps "x" is forbidden`, LastErrorTime: time.Now().Add(-90 * time.Second)}}},
		{State: loader.Failed, Path: "/d/bad.so", Error: "-race differs"},
	})
	got := out.String()
	for _, want := range []string{"NAME", "RECONCILES", "greeting  Running  greeting", "12", "0.50", "bad.so (Failed): -race differs",
		`greeting/greeting last error (1m30s ago): configmaps "x" is forbidden`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	printOperators(&out, nil)
	if !strings.Contains(out.String(), "No operators loaded") {
		t.Errorf("empty: %q", out.String())
	}
}

func TestCopyPlugin(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "op.so")
	if err := os.WriteFile(src, []byte("plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "operators")
	dst, err := copyPlugin(src, dir)
	if err != nil || dst != filepath.Join(dir, "op.so") {
		t.Fatalf("copyPlugin = %s, %v", dst, err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "plugin" {
		t.Fatalf("copied %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %v in the directory", ents)
	}
	if _, err := copyPlugin(src, dir); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second copy: %v", err)
	}
}
