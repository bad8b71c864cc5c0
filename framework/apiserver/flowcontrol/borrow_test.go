package flowcontrol

import (
	"math"
	"slices"
	"testing"
)

func TestAllocate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		total float64
		items []allocItem
		want  []float64
		fair  float64
	}{
		{"lower bounds use everything", 4, []allocItem{{2, 10, 5}, {2, 10, 2}}, []float64{2, 2}, 0},
		{"upper bounds fall short", 30, []allocItem{{0, 5, 5}, {1, 5, 2}}, []float64{5, 5}, math.Inf(1)},
		{"proportional to targets", 10, []allocItem{{0, 100, 2}, {0, 100, 8}}, []float64{2, 8}, 1},
		{"busy borrows from idle (idle at its lower bound)", 8, []allocItem{{4, 12, 8}, {2, 12, 2}}, []float64{6, 2}, 0.75},
		{"idle gets its lower bound, busy the rest", 10, []allocItem{{4, 12, 8}, {2, 12, 2}}, []float64{8, 2}, 1},
		{"upper bound caps a borrower", 10, []allocItem{{0, 6, 100}, {0, 100, 1}}, []float64{6, 4}, 4},
		{"zero targets share equally", 6, []allocItem{{0, 10, 0}, {0, 10, 0}, {0, 10, 0}}, []float64{2, 2, 2}, 2000},
		{"equal demand, nominal back", 8, []allocItem{{4, 12, 8}, {4, 12, 8}}, []float64{4, 4}, 0},
	} {
		got, fair, err := allocate(tc.total, tc.items)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		round := slices.Clone(got)
		for i := range round {
			round[i] = math.Round(round[i]*1e6) / 1e6
		}
		if !slices.Equal(round, tc.want) || math.Abs(fair-tc.fair) > 1e-6 && !(math.IsInf(fair, 1) && math.IsInf(tc.fair, 1)) {
			t.Errorf("%s: allocate(%v, %+v) = %v fair %v, want %v fair %v", tc.name, tc.total, tc.items, got, fair, tc.want, tc.fair)
		}
	}
	if _, _, err := allocate(5, []allocItem{{lower: 3, upper: 5, target: 1}}); err == nil {
		t.Error("a target below its lower bound is refused")
	}
}

func TestDemandStats(t *testing.T) {
	t.Parallel()
	var d demandStats
	d.update(demandObservation{avg: 4, stdDev: 1, max: 7, dur: 10})
	if d.smoothed != 5 || d.highWatermark != 7 {
		t.Errorf("first period: %+v, want smoothed 5 (avg+stdDev), high watermark 7", d)
	}
	d.update(demandObservation{avg: 0, max: 0, dur: 10})
	if want := 0.977 * 5; math.Abs(d.smoothed-want) > 1e-9 || d.highWatermark != 0 {
		t.Errorf("idle period: %+v, want smoothed %v (decayed)", d, want)
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	p := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		pl              PriorityLevel
		nominal, lo, hi int
	}{
		{PriorityLevel{}, 10, 10, 10 + 600},                                              // nothing lent, unlimited borrowing
		{PriorityLevel{LendablePercent: p(50), BorrowingLimitPercent: p(0)}, 49, 24, 49}, // round(24.5)=25 lent
		{PriorityLevel{LendablePercent: p(90), BorrowingLimitPercent: p(100)}, 98, 10, 196},
	} {
		lo, hi := bounds(&tc.pl, tc.nominal, 600)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("bounds(%+v, %d) = %d, %d, want %d, %d", tc.pl, tc.nominal, lo, hi, tc.lo, tc.hi)
		}
	}
}
