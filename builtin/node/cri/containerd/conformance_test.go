package containerd_test

import (
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

func TestConformance(t *testing.T) {
	rt := startRuntime(t)
	helper := runtimetest.BuildHelper(t)
	const image = "converge.test/helper:latest"
	importBinary(t, rt, helper, image, "/helper")
	runtimetest.RunConformance(t, func(*testing.T) cri.Runtime { return rt }, runtimetest.Options{
		Helper:                 "/helper",
		Image:                  image,
		EnforcesReadOnlyMounts: true,
		EnforcesReadOnlyRootfs: true,
		HostPIDs:               true,
		SetsSysctls:            true,
	})
}
