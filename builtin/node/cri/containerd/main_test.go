package containerd_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes its Runtime and stops its daemon; nothing may be left running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
