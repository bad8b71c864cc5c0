package containerd

import (
	"testing"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// TestPrivilegesOpt: containerd's default spec sets no_new_privs; the
// container's spec keeps it only when the ContainerSpec asks for it.
func TestPrivilegesOpt(t *testing.T) {
	t.Parallel()
	ctx := namespaces.WithNamespace(t.Context(), "test")
	for _, want := range []bool{false, true} {
		s, err := oci.GenerateSpec(ctx, nil, &containers.Container{ID: "c"}, privilegesOpt(cri.ContainerSpec{NoNewPrivileges: want}))
		if err != nil {
			t.Fatalf("GenerateSpec: %v", err)
		}
		if s.Process.NoNewPrivileges != want {
			t.Errorf("NoNewPrivileges %v: spec says %v", want, s.Process.NoNewPrivileges)
		}
	}
}
