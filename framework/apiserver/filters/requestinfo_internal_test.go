package filters

import (
	"strings"
	"testing"
)

func TestLowerMethod(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE", "Get", "propfind", ""} {
		if got, want := lowerMethod(m), strings.ToLower(m); got != want {
			t.Errorf("lowerMethod(%q) = %q, want %q", m, got, want)
		}
	}
}
