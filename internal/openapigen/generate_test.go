package openapigen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/converge-dev/converge/internal/openapigen"
)

// TestCheckedInDefinitionsAreFresh fails when builtin/openapi/definitions.json
// is not what the Go types generate: run `go generate ./builtin/openapi`.
func TestCheckedInDefinitionsAreFresh(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := openapigen.Kinds()
	if err != nil {
		t.Fatal(err)
	}
	want, err := openapigen.Generate(root, kinds)
	if err != nil {
		t.Fatalf("generating: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(root, "builtin/openapi/definitions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("builtin/openapi/definitions.json is stale: run go generate ./builtin/openapi")
	}
}
