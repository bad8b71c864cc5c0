package testenv_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"
)

func TestStartStopIsFast(t *testing.T) {
	t.Parallel()
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
	if took > time.Second {
		t.Errorf("start+stop took %s, want well under a second", took)
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
