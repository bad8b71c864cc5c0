package commits

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/converge-dev/converge/bench/internal/load"
	"github.com/converge-dev/converge/bench/internal/proc"
)

// server is one `converge apiserver` process and an HTTP/2 client for it
// built from the kubeconfig it wrote.
type server struct {
	name string
	pid  int
	url  string
	hc   *http.Client
}

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
	old, cur := startAPIServer(b, "old", oldBin), startAPIServer(b, "new", newBin)
	sides := []*server{old, cur}
	const conc, slices = 64, 10
	var seq atomic.Int64
	payload := strings.Repeat("x", 900)
	body := func(name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"bench"}},"data":{"k":%q,"n":"%d"}}`,
			name, payload, seq.Load())
	}
	create := func(s *server, name string) error {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
			s.url+"/api/v1/namespaces/default/configmaps?fieldManager=bench", bytes.NewReader(body(name)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := s.hc.Do(req)
		if err != nil {
			return fmt.Errorf("create on %s: %w", s.name, err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("read %s's create response: %w", s.name, err)
		}
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("create on %s: status %d: %s", s.name, resp.StatusCode, out)
		}
		return nil
	}
	op := func(s *server) func() error {
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
			c0, t0 := s.cpu(b), time.Now()
			if err := load.Run(conc, n, op(s)); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(t0)
			cpu[i] += s.cpu(b) - c0
		}
	}
	b.StopTimer()
	total := float64(n * slices)
	for i, s := range sides {
		b.ReportMetric(total/wall[i].Seconds(), s.name+"-creates/s")
		b.ReportMetric(float64(cpu[i].Microseconds())/total, s.name+"-server-cpu-us/create")
	}
	b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "new/old")
	b.ReportMetric(cpu[1].Seconds()/cpu[0].Seconds(), "cpu-new/old")
	b.ReportMetric(load1(), "load1")
	b.ReportMetric(0, "ns/op") // both sides' creates in one timer: not a figure
}

// load1 is the machine's one-minute load average at the end of the run.
func load1() float64 {
	var l float64
	b, _ := os.ReadFile("/proc/loadavg")
	_, _ = fmt.Sscan(string(b), &l)
	return l
}

// checkManagedFields fails unless s's object "probe" has managedFields
// exactly when want is true: the comparison is between a server that keeps
// them and one that does not.
func checkManagedFields(b *testing.B, s *server, want bool) {
	b.Helper()
	resp, err := s.hc.Get(s.url + "/api/v1/namespaces/default/configmaps/probe")
	if err != nil {
		b.Fatalf("get %s's probe: %v", s.name, err)
	}
	defer resp.Body.Close()
	var obj struct {
		Metadata struct {
			ManagedFields []json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("get %s's probe: status %d", s.name, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		b.Fatalf("decode %s's probe: %v", s.name, err)
	}
	if got := len(obj.Metadata.ManagedFields) > 0; got != want {
		b.Fatalf("%s's probe has managedFields %v, want %v: this pair of binaries does not compare managedFields against none", s.name, got, want)
	}
}

// cpu is the user and system CPU time the server process used so far.
func (s *server) cpu(tb testing.TB) time.Duration {
	c, err := proc.CPU(s.pid)
	if err != nil {
		tb.Fatalf("%s: %v", s.name, err)
	}
	return c
}

// startAPIServer runs `converge apiserver` (default secure mode, embedded
// etcd) from bin with its own data directory and port until the benchmark
// ends, and waits for the kubeconfig it writes into the data directory and
// for /readyz through an HTTP/2 client built from it.
func startAPIServer(tb testing.TB, name, bin string) *server {
	tb.Helper()
	dir := tb.TempDir()
	data := filepath.Join(dir, "data")
	cmd := proc.Start(tb, dir, nil, bin, "apiserver", "--data-dir", data, "--port", strconv.Itoa(proc.FreePort(tb)))
	s := &server{name: name, pid: cmd.Process.Pid}
	kubeconfig := filepath.Join(data, "kubeconfig")
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if last = s.connect(kubeconfig); last == nil {
			return s
		}
	}
	out, _ := os.ReadFile(filepath.Join(dir, filepath.Base(bin)+".log"))
	tb.Fatalf("%s (%s) not ready in 2 minutes: %v\n%s", name, bin, last, out[max(0, len(out)-3000):])
	return nil
}

// connect builds s's client from kubeconfig and checks /readyz over HTTP/2.
func (s *server) connect(kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("load %s: %w", kubeconfig, err)
	}
	cfg.QPS = -1
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return fmt.Errorf("client-go transport from %s: %w", kubeconfig, err)
	}
	hc := &http.Client{Transport: rt, Timeout: 30 * time.Second}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(out) != "ok" {
		return fmt.Errorf("readyz: %d %s", resp.StatusCode, out)
	}
	if resp.Proto != "HTTP/2.0" {
		return fmt.Errorf("readyz went over %s, want HTTP/2.0", resp.Proto)
	}
	s.url, s.hc = strings.TrimSuffix(cfg.Host, "/"), hc
	return nil
}
