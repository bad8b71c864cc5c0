package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestTracingSDKFlag: a --tracing-sdk that is not one of the implementations
// fails naming the flag and the values it takes, on every command that has
// it.
func TestTracingSDKFlag(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"up", "apiserver", "controller-manager", "scheduler"} {
		var out, errOut bytes.Buffer
		if code := Execute(t.Context(), []string{command, "--tracing-sdk", "jaeger"}, &out, &errOut); code == 0 {
			t.Fatalf("%s --tracing-sdk=jaeger: exit 0", command)
		}
		if msg := errOut.String(); !strings.Contains(msg, "--tracing-sdk") || !strings.Contains(msg, "converge, otel") {
			t.Errorf("%s --tracing-sdk=jaeger: %q, want the flag and its values", command, msg)
		}
	}
}
