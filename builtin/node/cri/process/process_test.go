package process_test

import (
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
