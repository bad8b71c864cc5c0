package controlplane_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/converge-dev/converge/controlplane"
)

// TestNewNodeRegistriesFile: a containerd node refuses a registries config it
// cannot read, naming the file, before it starts anything.
func TestNewNodeRegistriesFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "registries.yaml")
	if err := os.WriteFile(bad, []byte("mirrors:\n  docker.io:\n    endpoints: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := controlplane.NewNode(t.Context(), controlplane.NodeOptions{
		Runtime: controlplane.RuntimeContainerd, RegistriesFile: bad,
	})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "endpoints") {
		t.Errorf("NewNode with a bad registries file = %v, want an error naming %s and the unknown field", err, bad)
	}
}
