package process_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

func TestConformance(t *testing.T) {
	helper := runtimetest.BuildHelper(t)
	rt := process.New(process.Options{})
	t.Logf("namespaces: %v", rt.Namespaces())
	runtimetest.RunConformance(t, func(*testing.T) cri.Runtime { return rt }, runtimetest.Options{
		Helper: helper, HostPIDs: true, EnforcesReadOnlyMounts: rt.Namespaces(), EnforcesReadOnlyRootfs: rt.Namespaces(),
	})
}

func TestConformanceWithoutNamespaces(t *testing.T) {
	helper := runtimetest.BuildHelper(t)
	rt := process.New(process.Options{NoNamespaces: true})
	runtimetest.RunConformance(t, func(*testing.T) cri.Runtime { return rt }, runtimetest.Options{Helper: helper, HostPIDs: true})
}

func TestReadOnlyRootfsNeedsNamespaces(t *testing.T) {
	helper := runtimetest.BuildHelper(t)
	rt := process.New(process.Options{NoNamespaces: true})
	spec := cri.ContainerSpec{
		PodUID: "00000000-0000-4000-8000-000000000001", PodNamespace: "ns", PodName: "p", Name: "c",
		Image: "local/helper:1", Args: []string{helper, "exit", "0"}, LogPath: filepath.Join(t.TempDir(), "0.log"),
		ReadOnlyRootfs: true,
	}
	if _, err := rt.Start(t.Context(), spec); !errors.Is(err, cri.ErrInvalidSpec) {
		t.Fatalf("Start with ReadOnlyRootfs and no mount namespace: %v, want ErrInvalidSpec", err)
	}
}
