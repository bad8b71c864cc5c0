package simulated_test

import (
	"testing"

	"github.com/converge-dev/converge/builtin/node/runtime"
	"github.com/converge-dev/converge/builtin/node/runtime/runtimetest"
	"github.com/converge-dev/converge/builtin/node/runtime/simulated"
)

func TestConformance(t *testing.T) {
	const missing = "converge.invalid/missing:0"
	runtimetest.RunConformance(t, func(*testing.T) runtime.Runtime {
		return simulated.New(simulated.Options{ImagePresent: func(img string) bool { return img != missing }})
	}, runtimetest.Options{Helper: "/converge/helper", MissingImage: missing, EnforcesReadOnlyMounts: true})
}
