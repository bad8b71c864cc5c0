package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/node/fleet"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// BenchmarkFleetReady measures how long 5,000 simulated nodes take to be
// registered and Ready (goal: within 30 s), and the steady lease write rate.
//
//	go test ./builtin/node/fleet -run '^$' -bench FleetReady -benchtime 1x
func BenchmarkFleetReady(b *testing.B) {
	const nodes = 5000
	for range b.N {
		env := testenv.StartT(b, testenv.Options{})
		sch, err := all.NewScheme()
		if err != nil {
			b.Fatal(err)
		}
		c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
		if err != nil {
			b.Fatal(err)
		}
		f, err := fleet.New(fleet.Options{Config: &client.Config{Host: env.URL}, Nodes: nodes, Workers: 64})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(b.Context())
		done := make(chan error, 1)
		t0 := time.Now()
		go func() { done <- f.Start(ctx) }()
		for f.Registered() < nodes {
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(t0)
		ready, err := readyNodes(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		if ready != nodes {
			b.Fatalf("%d of %d nodes Ready", ready, nodes)
		}
		b.ReportMetric(took.Seconds(), "s-to-ready")
		if took > 30*time.Second {
			b.Errorf("5000 nodes took %v to be Ready (goal 30 s)", took)
		}
		cancel()
		<-done
	}
}
