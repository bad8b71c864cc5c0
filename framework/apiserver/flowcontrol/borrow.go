package flowcontrol

import (
	"errors"
	"math"
	"slices"
)

// Borrowing constants, Kubernetes' (KEP-1040).
const (
	// smoothing is the decay of the smoothed seat demand per adjustment
	// (a half-life of about 5 minutes at 10 s periods).
	smoothing = 0.977
	// minTarget stands in for a zero target so that every class has a
	// proportion.
	minTarget = 0.001
)

// allocItem is one level in the division of the server's seats.
type allocItem struct {
	lower, upper, target float64
}

// allocate divides total between items fairly, as Kubernetes does: each
// item gets clamp(fairProp × target, lower, upper) with fairProp chosen so
// that the allocations sum to total. When the lower bounds alone exceed the
// total, or the upper bounds fall short of it, the bounds are the answer.
// It returns the allocations and fairProp.
func allocate(total float64, items []allocItem) ([]float64, float64, error) {
	out := make([]float64, len(items))
	var lowSum, highSum float64
	bounds := make([]float64, 0, 2*len(items))
	targets := make([]float64, len(items))
	for i, it := range items {
		if it.lower < 0 || it.upper < it.lower || it.target < it.lower {
			return nil, 0, errors.New("an item's bounds are inconsistent (want 0 <= lower <= target and lower <= upper)")
		}
		targets[i] = max(it.target, minTarget)
		lowSum += it.lower
		highSum += it.upper
		bounds = append(bounds, it.lower/targets[i], it.upper/targets[i])
	}
	sum := func(p float64) float64 {
		s := 0.0
		for i, it := range items {
			s += min(max(p*targets[i], it.lower), it.upper)
		}
		return s
	}
	switch {
	case total <= lowSum:
		for i, it := range items {
			out[i] = it.lower
		}
		return out, 0, nil
	case total >= highSum:
		for i, it := range items {
			out[i] = it.upper
		}
		return out, math.Inf(1), nil
	}
	// sum is non-decreasing and linear between consecutive bounds: find the
	// segment holding total and interpolate.
	slices.Sort(bounds)
	prevP, prevS := 0.0, sum(0)
	p := bounds[len(bounds)-1]
	for _, b := range bounds {
		s := sum(b)
		if s >= total {
			if s == prevS {
				p = b
			} else {
				p = prevP + (b-prevP)*(total-prevS)/(s-prevS)
			}
			break
		}
		prevP, prevS = b, s
	}
	for i, it := range items {
		out[i] = min(max(p*targets[i], it.lower), it.upper)
	}
	return out, p, nil
}

// demandStats is a level's seat demand as the borrowing reads it.
type demandStats struct {
	avg, stdDev, smoothed float64
	highWatermark         int
}

// update folds one period's observation in: the envelope avg + stdDev, and
// smoothed = max(envelope, A×smoothed + (1−A)×envelope).
func (d *demandStats) update(o demandObservation) {
	d.highWatermark = int(math.Round(o.max))
	if o.dur <= 0 {
		return
	}
	d.avg, d.stdDev = o.avg, o.stdDev
	env := o.avg + o.stdDev
	d.smoothed = max(env, smoothing*d.smoothed+(1-smoothing)*env)
}

// Adjust recomputes every level's current limit from the seat demand since
// the last adjustment (Kubernetes does so every 10 s; Run calls it every
// Options.AdjustPeriod).
func (c *Controller) Adjust() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.adjustLocked(c.cur.Load(), true)
}

// adjustLocked is Kubernetes' borrowing: an exempt level's limit is its
// lower bound or its demand's high watermark, whichever is higher; the
// limited levels divide the sum of the nominal limits by allocate, each
// between max(lower, min(nominal, high watermark)) and its upper bound,
// aiming at max(that, smoothed demand). When exempt demand leaves too little,
// limited levels get their lower bounds plus a share of what is left.
// observe folds the demand since the last observation in first (the
// periodic adjustment); a configuration update divides the seats again from
// the demand already observed.
func (c *Controller) adjustLocked(s *snapshot, observe bool) {
	names := make([]string, 0, len(s.levels))
	for name := range s.levels {
		names = append(names, name)
	}
	slices.Sort(names)
	nominalSum := 0
	for _, name := range names {
		nominalSum += s.levels[name].nominal
	}
	remaining := nominalSum
	var items []allocItem
	var limited []*levelState
	minSum, minCurSum := 0, 0
	for _, name := range names {
		st := s.levels[name]
		b := st.borrow
		if observe {
			b.stats.update(st.run.takeDemand())
		}
		if st.pl.Exempt {
			b.current = max(st.lower, b.stats.highWatermark)
			b.target = float64(b.current)
			remaining -= b.current
			continue
		}
		minCur := max(st.lower, min(st.nominal, b.stats.highWatermark))
		b.target = max(float64(minCur), b.stats.smoothed)
		items = append(items, allocItem{lower: float64(minCur), upper: float64(st.upper), target: b.target})
		limited = append(limited, st)
		minSum += st.lower
		minCurSum += minCur
	}
	c.fairProp = 0
	switch {
	case remaining <= minSum:
		for _, st := range limited {
			st.borrow.current = st.lower
		}
	case remaining <= minCurSum:
		frac := float64(remaining-minSum) / float64(minCurSum-minSum)
		for i, st := range limited {
			st.borrow.current = st.lower + int(math.Round((items[i].lower-float64(st.lower))*frac))
		}
	default:
		allocs, fair, err := allocate(float64(nominalSum), items)
		if err != nil {
			c.opts.Logger.Error(err, "Dividing the seats between the priority levels failed; keeping their limits")
			break
		}
		c.fairProp = fair
		for i, st := range limited {
			st.borrow.current = int(math.Round(allocs[i]))
		}
	}
	for _, name := range names {
		st := s.levels[name]
		if !st.pl.Exempt {
			st.run.setLimit(st.borrow.current)
		}
	}
}
