package plugin

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestParallelizerUntil(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		workers int
		budget  time.Duration
		pieces  int
		// slow makes each piece take this long, so that the serial budget
		// runs out and workers start.
		slow time.Duration
	}{
		{name: "no pieces", workers: 4, budget: DefaultSerialBudget},
		{name: "one worker", workers: 1, budget: DefaultSerialBudget, pieces: 100},
		{name: "serial within budget", workers: 8, budget: time.Hour, pieces: 5000},
		{name: "fan out at once", workers: 8, pieces: 5000},
		{name: "fan out after budget", workers: 8, budget: time.Millisecond, pieces: 300, slow: 50 * time.Microsecond},
		{name: "fewer pieces than workers", workers: 16, pieces: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			counts := make([]atomic.Int32, tt.pieces)
			NewParallelizerWithBudget(tt.workers, tt.budget).Until(context.Background(), tt.pieces, func(_ context.Context, i int) {
				if tt.slow > 0 {
					time.Sleep(tt.slow)
				}
				counts[i].Add(1)
			}, "test")
			for i := range counts {
				if n := counts[i].Load(); n != 1 {
					t.Fatalf("piece %d ran %d times, want 1", i, n)
				}
			}
		})
	}
}

func TestParallelizerUntilStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	for _, budget := range []time.Duration{0, DefaultSerialBudget, time.Hour} {
		ctx, cancel := context.WithCancel(context.Background())
		var ran atomic.Int32
		NewParallelizerWithBudget(4, budget).Until(ctx, 100000, func(_ context.Context, i int) {
			if ran.Add(1) == 10 {
				cancel()
			}
		}, "test")
		cancel()
		// Chunks already started finish; no new chunk starts.
		if n := ran.Load(); n >= 100000 {
			t.Errorf("budget %v: all %d pieces ran after cancel", budget, n)
		}
	}
}
