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

// BenchmarkWatchServeFanout measures how long one ConfigMap create takes to
// reach 1,000 watchers over HTTPS and HTTP/2 on the real server: the API
// server's handler on its own embedded etcd (no fsync), served by NewHTTPServer
// (100 streams per connection, so the watchers use 10 connections, as
// client-go's do), watched through Go's HTTP/2 client. The watchers read the
// stream line by line without decoding it, so the process's CPU is mostly the
// server's. Each round creates one ConfigMap through the HTTPS client and
// takes the time from just before the create to the 1,000th delivery.
//
// Metrics: the median of the rounds' times to the first and the last
// delivery, and process CPU per round (server and client together). Run with
// -cpuprofile, -blockprofile or -mutexprofile to see where the serving side
// spends it.
func BenchmarkWatchServeFanout(b *testing.B) {
	const rounds = 20
	e, err := etcd.StartEmbedded(b.Context(), etcd.EmbeddedOptions{Dir: b.TempDir(), NoFsync: true, LogLevel: "error"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	h := managedFieldsServerOn(b, etcd.New(e.LocalClient()), false)
	ts := httptest.NewUnstartedServer(h)
	ts.Config = NewHTTPServer(b.Context(), h, ServingOptions{Logger: logr.Discard()})
	var conns atomic.Int64
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.EnableHTTP2 = true
	ts.StartTLS()
	b.Cleanup(ts.Close)
	client := ts.Client()

	rv := createOver(b, client, ts.URL, "fan-0")
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	arrivals := make(chan time.Time, fanoutWatchers)
	opened := make(chan error, fanoutWatchers)
	// Opened 32 at a time, as bench/peer opens them with client-go.
	sem := make(chan struct{}, 32)
	for range fanoutWatchers {
		sem <- struct{}{}
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
				ts.URL+"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion="+rv, nil)
			resp, err := client.Do(req)
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
				arrivals <- time.Now()
			}
		}()
	}
	for range fanoutWatchers {
		if err := <-opened; err != nil {
			b.Fatal(err)
		}
	}
	var created, first, last []time.Duration
	var cpu time.Duration
	b.ResetTimer()
	for i := range b.N {
		for r := range rounds {
			time.Sleep(20 * time.Millisecond)
			c0, t0 := cpuTime(), time.Now()
			createOver(b, client, ts.URL, fmt.Sprintf("fan-%d-%d", i, r+1))
			created = append(created, time.Since(t0))
			var t time.Time
			for n := range fanoutWatchers {
				select {
				case t = <-arrivals:
				case <-time.After(time.Minute):
					b.Fatalf("%d of %d watchers received the event in a minute", n, fanoutWatchers)
				}
				if n == 0 {
					first = append(first, t.Sub(t0))
				}
			}
			last = append(last, t.Sub(t0))
			cpu += cpuTime() - c0
		}
	}
	b.StopTimer()
	slices.Sort(created)
	slices.Sort(first)
	slices.Sort(last)
	b.ReportMetric(float64(created[len(created)/2])/1e6, "create-ms")
	b.ReportMetric(float64(first[len(first)/2])/1e6, "first-ms")
	b.ReportMetric(float64(last[len(last)/2])/1e6, "last-ms")
	b.ReportMetric(float64(last[len(last)*9/10])/1e6, "last-p90-ms")
	b.ReportMetric(float64(cpu)/1e6/float64(len(last)), "cpu-ms/event")
	b.ReportMetric(float64(conns.Load()), "conns")
	b.ReportMetric(0, "ns/op")
}

// createOver creates a ConfigMap (~1 KB) in default through client and
// returns its resourceVersion.
func createOver(tb testing.TB, client *http.Client, url, name string) string {
	tb.Helper()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, strings.Repeat("x", 1000))
	resp, err := client.Post(url+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if resp.StatusCode != http.StatusCreated {
		tb.Fatalf("create %s: %s", name, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatal(err)
	}
	return out.Metadata.ResourceVersion
}
