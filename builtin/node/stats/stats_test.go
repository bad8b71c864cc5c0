package stats_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/simulated"
	"github.com/converge-dev/converge/builtin/node/stats"
)

func TestSamplerRatesAndExposition(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rt := simulated.New(simulated.Options{Usage: func(cri.ContainerSpec) simulated.Usage {
		return simulated.Usage{CPUMilli: 250, MemoryBytes: 64 << 20}
	}})
	id, err := rt.Start(ctx, cri.ContainerSpec{PodNamespace: "ns", PodName: "web", Name: "app", LogPath: filepath.Join(t.TempDir(), "log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop(context.WithoutCancel(ctx), id, 0) })
	var hostCalls uint64
	s, err := stats.New(stats.Options{
		NodeName: "n1", Runtime: rt,
		Pods: func() []stats.Pod {
			return []stats.Pod{{Namespace: "ns", Name: "web", UID: "u1", Containers: []stats.Container{{Name: "app", ID: id}}}}
		},
		Host: func() (stats.Reading, error) {
			hostCalls++
			return stats.Reading{Time: time.Unix(int64(hostCalls), 0), CPUNanos: hostCalls * 500_000_000}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Sample(ctx) {
		t.Error("first reading not reported as first")
	}
	if sum := s.Summary(); sum.Pods[0].CPU.UsageNanoCores != nil {
		t.Fatalf("one reading gave a rate: %+v", sum.Pods[0].CPU)
	}
	time.Sleep(200 * time.Millisecond)
	if s.Sample(ctx) {
		t.Error("second reading reported as first")
	}
	sum := s.Summary()
	if got := *sum.Node.CPU.UsageNanoCores; got != 500_000_000 {
		t.Errorf("node rate = %d nanocores, want 500000000", got)
	}
	pod := sum.Pods[0]
	if got := float64(*pod.Containers[0].CPU.UsageNanoCores) / 1e6; got < 240 || got > 260 {
		t.Errorf("container rate = %.1f millicores, want about 250", got)
	}
	if got := *pod.Memory.WorkingSetBytes; got != 64<<20 {
		t.Errorf("pod working set = %d, want %d", got, 64<<20)
	}

	mux := http.NewServeMux()
	s.Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics/resource", nil))
	body := rec.Body.String()
	for _, want := range []string{
		"# TYPE container_cpu_usage_seconds_total counter",
		`container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 6.7108864e+07 `,
		"node_cpu_usage_seconds_total 1 2000",
		`pod_memory_working_set_bytes{namespace="ns",pod="web"} 6.7108864e+07 `,
		"scrape_error 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics/resource lacks %q:\n%s", want, body)
		}
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/stats/summary", nil))
	var got stats.Summary
	if err := json.NewDecoder(bytes.NewReader(rec.Body.Bytes())).Decode(&got); err != nil || got.Node.NodeName != "n1" || len(got.Pods) != 1 {
		t.Errorf("/stats/summary = %s (%v)", rec.Body.String(), err)
	}
}
