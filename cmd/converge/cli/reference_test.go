package cli

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command tree")

const referencePath = "../../../docs/cli.md"

// TestCLIReference fails when docs/cli.md is stale; -update rewrites it.
func TestCLIReference(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(referencePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v: generate it with `go test ./cmd/converge/cli -run TestCLIReference -update`", err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatal("docs/cli.md is stale: regenerate it with `go test ./cmd/converge/cli -run TestCLIReference -update`")
	}
}
