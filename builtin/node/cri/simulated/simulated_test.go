package simulated_test

import (
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
	"github.com/converge-dev/converge/builtin/node/cri/simulated"
)

func TestConformance(t *testing.T) {
	const missing = "converge.invalid/missing:0"
	runtimetest.RunConformance(t, func(*testing.T) cri.Runtime {
		return simulated.New(simulated.Options{ImagePresent: func(img string) bool { return img != missing }})
	}, runtimetest.Options{Helper: "/converge/helper", MissingImage: missing, EnforcesReadOnlyMounts: true})
}
