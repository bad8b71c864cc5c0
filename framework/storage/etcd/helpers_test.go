package etcd

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// startTestServer starts a private embedded server, closed at test end.
func startTestServer(t *testing.T) *Embedded {
	t.Helper()
	start := time.Now()
	e, err := StartEmbedded(t.Context(), EmbeddedOptions{Dir: t.TempDir(), NoFsync: true})
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Logf("embedded etcd ready in %s at %v", time.Since(start), e.Endpoints())
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

var prefixSeq atomic.Int64

// testPrefix is a key prefix no other test (or repetition with -count) uses on
// the shared server.
func testPrefix(t *testing.T) string {
	return fmt.Sprintf("/%s/%d/", t.Name(), prefixSeq.Add(1))
}
