package cli

import (
	"strings"
	"testing"
)

func TestUpRejectsBadMemoryLimit(t *testing.T) {
	c := &cli{t: t}
	for _, v := range []string{"lots", "-1Gi", "0"} {
		if msg := c.failsWith("up", "--memory-limit", v, "--data-dir", t.TempDir()); !strings.Contains(msg, "--memory-limit") {
			t.Errorf("--memory-limit %s: %q, want it named", v, msg)
		}
	}
}
