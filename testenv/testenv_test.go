package testenv_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"
)

// TestStartStopIsFast bounds what a suite pays per environment. The best of
// three rounds counts, and the test does not run beside the package's
// parallel tests: on a loaded CI machine one round can wait for a CPU far
// longer than the work takes (1.09 s seen once, 45–135 ms alone).
func TestStartStopIsFast(t *testing.T) {
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		env, err := testenv.Start(t.Context(), testenv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(env.URL + "/api/v1/namespaces/default")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET default namespace: %d %s", resp.StatusCode, body)
		}
		if err := env.Stop(); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		t.Logf("start+request+stop took %s", took)
		best = min(best, took)
	}
	if best > time.Second {
		t.Errorf("start+stop took at best %s, want well under a second", best)
	}
}

func TestParallelEnvironments(t *testing.T) {
	t.Parallel()
	a := testenv.StartT(t, testenv.Options{})
	b := testenv.StartT(t, testenv.Options{})
	if a.URL == b.URL {
		t.Fatalf("two environments share %s", a.URL)
	}
}
