package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/storage/etcd"
)

// fanoutWatchers is the number of watch connections of BenchmarkWatchServeFanout,
// as in bench/peer's fan-out against kube-apiserver.
const fanoutWatchers = 1000

// fanoutSide is the server of BenchmarkWatchServeFanout and its watchers.
type fanoutSide struct {
	url                  string
	client               *http.Client
	arrivals             chan time.Time // one per event a watcher read
	conns                atomic.Int64   // connections accepted
	created, first, last []time.Duration
	cpu                  time.Duration
}

// BenchmarkWatchServeFanout measures how long one ConfigMap create takes to
// reach 1,000 watchers over HTTPS and HTTP/2 on the real server: the API
// server's handler on its own embedded etcd (no fsync), served by NewHTTPServer
// (100 streams per connection), watched through Go's HTTP/2 client, the
// watches opened 32 at a time as bench/peer opens them with client-go. The
// watchers read the stream line by line without decoding it, so the process's
// CPU is mostly the server's. Each round creates one ConfigMap through the
// HTTPS client and takes the time from just before the create to the first
// and to the 1,000th delivery.
//
// Metrics: the medians of the create's latency and of the times to the first
// and the last delivery (and the last's 90th percentile), process CPU per
// round (server and client together) and the connections the client opened.
// Run with -cpuprofile, -blockprofile or -mutexprofile to see where the
// serving side spends it.
func BenchmarkWatchServeFanout(b *testing.B) {
	const rounds = 20
	s := startFanoutSide(b)
	b.ResetTimer()
	for i := range b.N {
		for r := range rounds {
			time.Sleep(20 * time.Millisecond)
			s.round(b, fmt.Sprintf("fan-%d-%d", i, r+1))
		}
	}
	b.StopTimer()
	ms := func(ds []time.Duration, q float64) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[int(q*float64(len(ds)))]) / 1e6
	}
	b.ReportMetric(ms(s.created, 0.5), "create-ms")
	b.ReportMetric(ms(s.first, 0.5), "first-ms")
	b.ReportMetric(ms(s.last, 0.5), "last-ms")
	b.ReportMetric(ms(s.last, 0.9), "last-p90-ms")
	b.ReportMetric(float64(s.cpu)/1e6/float64(len(s.last)), "cpu-ms/event")
	b.ReportMetric(float64(s.conns.Load()), "conns")
	b.ReportMetric(0, "ns/op")
}

// startFanoutSide starts a server and opens its watchers.
func startFanoutSide(b *testing.B) *fanoutSide {
	e, err := etcd.StartEmbedded(b.Context(), etcd.EmbeddedOptions{Dir: b.TempDir(), NoFsync: true, LogLevel: "error"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	h := managedFieldsServerOn(b, etcd.New(e.LocalClient()), false)
	s := &fanoutSide{arrivals: make(chan time.Time, fanoutWatchers)}
	ts := httptest.NewUnstartedServer(h)
	ts.Config = NewHTTPServer(b.Context(), h, ServingOptions{Logger: logr.Discard()})
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	ts.EnableHTTP2 = true
	ts.StartTLS()
	b.Cleanup(ts.Close)
	s.url, s.client = ts.URL, ts.Client()

	rv := s.create(b, "fan-0")
	ctx, cancel := context.WithCancel(b.Context())
	b.Cleanup(cancel)
	opened := make(chan error, fanoutWatchers)
	sem := make(chan struct{}, 32)
	for range fanoutWatchers {
		sem <- struct{}{}
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
				s.url+"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion="+rv, nil)
			resp, err := s.client.Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("watch: %s", resp.Status)
			}
			opened <- err
			<-sem
			if err != nil {
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 16<<10)
			for {
				if _, err := r.ReadSlice('\n'); err != nil {
					return
				}
				s.arrivals <- time.Now()
			}
		}()
	}
	timeout := time.After(time.Minute)
	for n := range fanoutWatchers {
		select {
		case err := <-opened:
			if err != nil {
				b.Fatal(err)
			}
		case <-timeout:
			b.Fatalf("%d of %d watches opened in a minute", n, fanoutWatchers)
		}
	}
	return s
}

// round creates one ConfigMap and waits until every watcher read it.
func (s *fanoutSide) round(b *testing.B, name string) {
	c0, t0 := cpuTime(), time.Now()
	s.create(b, name)
	s.created = append(s.created, time.Since(t0))
	timeout := time.After(time.Minute)
	var t time.Time
	for n := range fanoutWatchers {
		select {
		case t = <-s.arrivals:
		case <-timeout:
			b.Fatalf("%d of %d watchers received the event in a minute", n, fanoutWatchers)
		}
		if n == 0 {
			s.first = append(s.first, t.Sub(t0))
		}
	}
	s.last = append(s.last, t.Sub(t0))
	s.cpu += cpuTime() - c0
}

// create creates a ConfigMap (~1 KB) in default over HTTPS and returns its
// resourceVersion.
func (s *fanoutSide) create(tb testing.TB, name string) string {
	tb.Helper()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, strings.Repeat("x", 1000))
	resp, err := s.client.Post(s.url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		tb.Fatalf("create %s: %s", name, resp.Status)
	}
	var out struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatal(err)
	}
	return out.Metadata.ResourceVersion
}
