package commits

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/bench/internal/apiproc"
	"github.com/converge-dev/converge/bench/internal/load"
)

// BenchmarkCreatesAgainstCommit is issue 23's performance point as the issue
// states it: API creates per second of the working tree's converge (which
// keeps managedFields) against another commit's (hack/bench-against-commit.sh
// builds bbe7e82^, the commit before managedFields), "same run, same
// machine". Each binary runs as `converge apiserver` on its own embedded etcd
// in the default secure mode (HTTPS, client certificates, RBAC, admission),
// reached through client-go's transport from the kubeconfig it writes
// (rest.TransportFor: HTTP/2). ConfigMap creates (~1 KB JSON, a label and two
// data keys, ?fieldManager=bench) go at concurrency 64, b.N per side in ten
// alternating slices (each side first every other time), response bodies
// read. It reports creates/s of each, the ratio new ÷ old (the goal ≥ 0.9)
// and each server process's CPU per create (/proc/<pid>/stat) and their
// ratio new ÷ old, with the one-minute load average, and checks that the new
// side stores managedFields and the old one does not.
func BenchmarkCreatesAgainstCommit(b *testing.B) {
	oldBin, newBin := os.Getenv("CONVERGE_OLD"), os.Getenv("CONVERGE_NEW")
	if oldBin == "" || newBin == "" {
		b.Fatal("CONVERGE_OLD and CONVERGE_NEW must name two converge binaries (the other commit's and the working tree's): run hack/bench-against-commit.sh [COMMIT]")
	}
	old, cur := apiproc.Start(b, "old", oldBin), apiproc.Start(b, "new", newBin)
	sides := []*apiproc.Server{old, cur}
	const conc, slices = 64, 10
	var seq atomic.Int64
	payload := strings.Repeat("x", 900)
	body := func(name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"bench"}},"data":{"k":%q,"n":"%d"}}`,
			name, payload, seq.Load())
	}
	create := func(s *apiproc.Server, name string) error {
		return s.Create("/api/v1/namespaces/default/configmaps?fieldManager=bench", body(name))
	}
	op := func(s *apiproc.Server) func() error {
		return func() error { return create(s, fmt.Sprintf("cm-%d", seq.Add(1))) }
	}
	for _, s := range sides {
		if err := create(s, "probe"); err != nil {
			b.Fatal(err)
		}
		if err := load.Run(conc, conc, op(s)); err != nil { // warm up
			b.Fatal(err)
		}
	}
	checkManagedFields(b, old, false)
	checkManagedFields(b, cur, true)

	n := max(b.N/slices, conc)
	wall := make([]time.Duration, len(sides))
	cpu := make([]time.Duration, len(sides))
	b.ResetTimer()
	for k := range slices {
		for j := range sides {
			i := (j + k) % len(sides) // each side first every other time
			s := sides[i]
			c0, t0 := s.CPU(b), time.Now()
			if err := load.Run(conc, n, op(s)); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(t0)
			cpu[i] += s.CPU(b) - c0
		}
	}
	b.StopTimer()
	total := float64(n * slices)
	for i, s := range sides {
		b.ReportMetric(total/wall[i].Seconds(), s.Name+"-creates/s")
		b.ReportMetric(float64(cpu[i].Microseconds())/total, s.Name+"-server-cpu-us/create")
	}
	b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "new/old")
	b.ReportMetric(cpu[1].Seconds()/cpu[0].Seconds(), "cpu-new/old")
	b.ReportMetric(apiproc.Load1(), "load1")
	b.ReportMetric(0, "ns/op") // both sides' creates in one timer: not a figure
}

// checkManagedFields fails unless s's object "probe" has managedFields
// exactly when want is true: the comparison is between a server that keeps
// them and one that does not.
func checkManagedFields(b *testing.B, s *apiproc.Server, want bool) {
	b.Helper()
	resp, err := s.HC.Get(s.URL + "/api/v1/namespaces/default/configmaps/probe")
	if err != nil {
		b.Fatalf("get %s's probe: %v", s.Name, err)
	}
	defer resp.Body.Close()
	var obj struct {
		Metadata struct {
			ManagedFields []json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("get %s's probe: status %d", s.Name, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		b.Fatalf("decode %s's probe: %v", s.Name, err)
	}
	if got := len(obj.Metadata.ManagedFields) > 0; got != want {
		b.Fatalf("%s's probe has managedFields %v, want %v: this pair of binaries does not compare managedFields against none", s.Name, got, want)
	}
}
