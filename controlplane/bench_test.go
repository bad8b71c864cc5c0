package controlplane_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/controlplane"
)

// BenchmarkCreate compares ConfigMap creates through the API server with raw etcd
// puts of the same bytes on the same embedded etcd (fsync on, as `converge up`
// runs), at concurrency 1 and 64. Each sub-benchmark reports creates/s; the
// ratio api/etcd is the figure the foundation issue asks for (goal ≥ 0.6 at 64).
//
// The load generators run in the measured process, on the same 2 CPUs as the
// servers, so their own cost lowers the rate they measure. The raw side is
// measured twice: "etcd" puts through etcd's gRPC client, as any etcd user
// writes, and "etcdlocal" through the in-process client the API server's
// storage uses (etcd's v3client: no gRPC, no sockets), which is etcd's own cost
// alone. The API side is measured twice too: "api" with Go's net/http client,
// which hands each request to two goroutines per connection, and "apilean"
// with a minimal HTTP/1.1 client (leanClient) that writes each request with one
// write and reads the response on the calling goroutine, as a load generator
// such as wrk does, so that the figure is the server's. cpu-us/op is the whole
// process's CPU time per operation (API server, etcd and the benchmark's own
// client), ops/fsync how many writes etcd committed per WAL fsync, ms/fsync
// how long each took.
func BenchmarkCreate(b *testing.B) {
	cp, api, raw := startCreateBench(b)
	defer cp.Close()
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("api/c%d", conc), func(b *testing.B) { run(b, conc, b.N, api.netHTTP) })
		b.Run(fmt.Sprintf("apilean/c%d", conc), func(b *testing.B) { run(b, conc, b.N, api.lean) })
		b.Run(fmt.Sprintf("etcd/c%d", conc), func(b *testing.B) { run(b, conc, b.N, raw.grpc) })
		b.Run(fmt.Sprintf("etcdlocal/c%d", conc), func(b *testing.B) { run(b, conc, b.N, raw.local) })
	}
}

// BenchmarkInterleavedCreate is BenchmarkCreate at concurrency 64 measured in
// alternating slices (api, apilean, etcd, etcdlocal, api, ...) of b.N/10
// operations each, so that a shared machine's changing load weighs on all
// sides alike; it reports the ratios of the rates: ratio and ratio-lean
// against gRPC puts, ratio-local and ratio-lean-local against in-process puts.
func BenchmarkInterleavedCreate(b *testing.B) {
	cp, api, raw := startCreateBench(b)
	defer cp.Close()
	const slices, conc = 10, 64
	n := max(b.N/slices, conc)
	sides := []benchSide{{name: "api", op: api.netHTTP}, {name: "apilean", op: api.lean}, {name: "etcd", op: raw.grpc}, {name: "etcdlocal", op: raw.local}}
	interleave(sides, slices, conc, n)
	total := float64(n * slices)
	for _, s := range sides {
		unit := "-creates/s"
		if strings.HasPrefix(s.name, "etcd") {
			unit = "-puts/s"
		}
		b.ReportMetric(total/s.wall.Seconds(), s.name+unit)
		b.ReportMetric(float64(s.cpu.Microseconds())/total, s.name+"-cpu-us/op")
	}
	ratio := func(raw, api int) float64 { return sides[raw].wall.Seconds() / sides[api].wall.Seconds() }
	b.ReportMetric(ratio(2, 0), "ratio")
	b.ReportMetric(ratio(2, 1), "ratio-lean")
	b.ReportMetric(ratio(3, 0), "ratio-local")
	b.ReportMetric(ratio(3, 1), "ratio-lean-local")
}

// apiOps are the API side's operation through each client.
type apiOps struct{ netHTTP, lean func() error }

// rawOps are the raw side's put through each etcd client.
type rawOps struct{ grpc, local func() error }

// startCreateBench starts a control plane and returns the operations compared:
// a ConfigMap POST through the API server (by each client) and a raw etcd put of
// the same bytes (by each etcd client).
func startCreateBench(b *testing.B) (cp *controlplane.ControlPlane, api apiOps, raw rawOps) {
	cp, err := controlplane.Start(context.Background(), controlplane.Options{DataDir: b.TempDir(), CompactionInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	payload := strings.Repeat("x", 512)
	body := func(name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}
	hc := &http.Client{Transport: transport}

	var seq atomic.Int64
	const path = "/api/v1/namespaces/default/configmaps"
	api.netHTTP = func() error {
		name := fmt.Sprintf("cm-%d", seq.Add(1))
		resp, err := hc.Post(cp.URL()+path, "application/json", bytes.NewReader(body(name)))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("create: %d", resp.StatusCode)
		}
		return nil
	}
	lc := &leanClient{addr: strings.TrimPrefix(cp.URL(), "http://"), idle: make(chan *leanConn, 128)}
	b.Cleanup(lc.close)
	api.lean = func() error {
		name := fmt.Sprintf("cm-%d", seq.Add(1))
		return lc.post(path, body(name), http.StatusCreated)
	}
	put := func(kv *clientv3.Client) func() error {
		return func() error {
			name := fmt.Sprintf("raw-%d", seq.Add(1))
			_, err := kv.Put(context.Background(), "/bench/raw/"+name, string(body(name)))
			return err
		}
	}
	return cp, api, rawOps{grpc: put(cp.EtcdClient()), local: put(cp.EtcdLocalClient())}
}

// run performs n operations with conc goroutines; with b set it reports
// creates/s, CPU and etcd fsync figures for them.
func run(b *testing.B, conc, n int, op func() error) {
	if b != nil {
		b.ReportAllocs()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	f0, s0 := walFsyncs()
	c0 := cpuTime()
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := op(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - c0
	close(errs)
	if err := <-errs; err != nil {
		if b == nil {
			panic(err)
		}
		b.Fatal(err)
	}
	if b == nil {
		return
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "creates/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/op")
	if f1, s1 := walFsyncs(); f1 > f0 {
		b.ReportMetric(float64(n)/float64(f1-f0), "ops/fsync")
		b.ReportMetric((s1-s0)/float64(f1-f0)*1e3, "ms/fsync")
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// walFsyncs reads etcd's WAL fsync count and total seconds from the default
// Prometheus registry (the embedded etcd registers its metrics there).
func walFsyncs() (count uint64, seconds float64) {
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() != "etcd_disk_wal_fsync_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			count += m.GetHistogram().GetSampleCount()
			seconds += m.GetHistogram().GetSampleSum()
		}
	}
	return count, seconds
}

// leanClient is the benchmark's minimal HTTP/1.1 client: keep-alive connections,
// each request written with one write, the response read on the calling
// goroutine. It speaks just enough HTTP for these POSTs.
type leanClient struct {
	addr string
	idle chan *leanConn
}

type leanConn struct {
	c   net.Conn
	r   *bufio.Reader
	req []byte
}

// post sends body to path and reads the whole response, which must have status
// want.
func (lc *leanClient) post(path string, body []byte, want int) error {
	var conn *leanConn
	select {
	case conn = <-lc.idle:
	default:
		c, err := net.Dial("tcp", lc.addr)
		if err != nil {
			return err
		}
		conn = &leanConn{c: c, r: bufio.NewReaderSize(c, 8<<10)}
	}
	conn.req = fmt.Appendf(conn.req[:0], "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\n\r\n", path, lc.addr, len(body))
	conn.req = append(conn.req, body...)
	if _, err := conn.c.Write(conn.req); err != nil {
		conn.c.Close()
		return err
	}
	resp, err := http.ReadResponse(conn.r, nil)
	if err != nil {
		conn.c.Close()
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		conn.c.Close()
		return err
	}
	select {
	case lc.idle <- conn:
	default:
		conn.c.Close()
	}
	if resp.StatusCode != want {
		return fmt.Errorf("create: %d", resp.StatusCode)
	}
	return nil
}

func (lc *leanClient) close() {
	for {
		select {
		case conn := <-lc.idle:
			conn.c.Close()
		default:
			return
		}
	}
}

// benchSide is one side of an interleaved comparison: its operation and the
// wall and process CPU time its slices took.
type benchSide struct {
	name      string
	op        func() error
	wall, cpu time.Duration
}

// interleave runs n ops of each side at concurrency conc, side after side,
// slices times, adding up each side's wall and CPU time: load and noise that
// change during the run fall on every side alike.
func interleave(sides []benchSide, slices, conc, n int) {
	for range slices {
		for i := range sides {
			c0, t0 := cpuTime(), time.Now()
			run(nil, conc, n, sides[i].op)
			sides[i].wall += time.Since(t0)
			sides[i].cpu += cpuTime() - c0
		}
	}
}
