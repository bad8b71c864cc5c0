package controlplane_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/controlplane"
)

// BenchmarkCreate compares ConfigMap creates through the API server with raw etcd
// puts of the same bytes on the same embedded etcd (fsync on, as `converge up`
// runs), at concurrency 1 and 64. Each sub-benchmark reports creates/s; the
// ratio api/etcd is the figure the foundation issue asks for (goal ≥ 0.6 at 64).
func BenchmarkCreate(b *testing.B) {
	cp, err := controlplane.Start(context.Background(), controlplane.Options{DataDir: b.TempDir(), CompactionInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer cp.Close()
	payload := strings.Repeat("x", 512)
	body := func(name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}
	hc := &http.Client{Transport: transport}
	var seq atomic.Int64
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("api/c%d", conc), func(b *testing.B) {
			run(b, conc, func() error {
				name := fmt.Sprintf("cm-%d", seq.Add(1))
				resp, err := hc.Post(cp.URL()+"/api/v1/namespaces/default/configmaps", "application/json", bytes.NewReader(body(name)))
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					return fmt.Errorf("create: %d", resp.StatusCode)
				}
				return nil
			})
		})
		b.Run(fmt.Sprintf("etcd/c%d", conc), func(b *testing.B) {
			kv := cp.EtcdClient()
			run(b, conc, func() error {
				name := fmt.Sprintf("raw-%d", seq.Add(1))
				_, err := kv.Put(context.Background(), "/bench/raw/"+name, string(body(name)))
				return err
			})
		})
	}
}

func run(b *testing.B, conc int, op func() error) {
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
}
