package podautoscaler

import (
	"math"
	"sync"
	"time"

	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	"github.com/converge-dev/converge/framework/client"
)

// Kubernetes' limits for an autoscaler without behavior: scale up to at most
// twice the replicas (at least 4) per sync.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// recommendation is one past replica recommendation.
type recommendation struct {
	at       time.Time
	replicas int32
}

// scaleEvent is one past change of replicas in one direction.
type scaleEvent struct {
	at     time.Time
	change int32
}

// history is what the controller remembers about each autoscaler between
// syncs (Kubernetes keeps it in memory too): recent recommendations for
// stabilization, recent scale events for the rate policies.
type history struct {
	mu              sync.Mutex
	recommendations map[client.ObjectKey][]recommendation // guarded by mu
	up, down        map[client.ObjectKey][]scaleEvent     // guarded by mu
}

func newHistory() *history {
	return &history{recommendations: map[client.ObjectKey][]recommendation{},
		up: map[client.ObjectKey][]scaleEvent{}, down: map[client.ObjectKey][]scaleEvent{}}
}

// forget drops an autoscaler that no longer exists.
func (h *history) forget(key client.ObjectKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.recommendations, key)
	delete(h.up, key)
	delete(h.down, key)
}

// normalized is the result of bringing a recommendation within the limits.
type normalized struct {
	replicas int32
	// stabilized is set when stabilization changed the recommendation.
	stabilized               bool
	stabilizeReason, stabMsg string
	// limited is set when min/max or a rate limit changed it.
	limited               bool
	limitReason, limitMsg string
}

// normalize applies stabilization and limits to desired, recording it:
// Kubernetes' normalizeDesiredReplicas without behavior.
func (h *history) normalize(key client.ObjectKey, now time.Time, window time.Duration, current, desired, minReplicas, maxReplicas int32) normalized {
	h.mu.Lock()
	stabilized := desired
	cutoff := now.Add(-window)
	recs := h.recommendations[key]
	kept := recs[:0]
	for _, r := range recs {
		if r.at.After(cutoff) {
			stabilized = max(stabilized, r.replicas)
			kept = append(kept, r)
		}
	}
	h.recommendations[key] = append(kept, recommendation{at: now, replicas: desired})
	h.mu.Unlock()

	out := normalized{}
	if stabilized != desired {
		out.stabilized = true
		out.stabilizeReason, out.stabMsg = "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
	}
	minimum, minReason, minMsg := minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	scaleUpLimit := int32(max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maximum, maxReason, maxMsg := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxReplicas > scaleUpLimit {
		maximum, maxReason, maxMsg = scaleUpLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	out.replicas, out.limitReason, out.limitMsg = stabilized, "DesiredWithinRange", "the desired count is within the acceptable range"
	switch {
	case stabilized < minimum:
		out.replicas, out.limitReason, out.limitMsg, out.limited = minimum, minReason, minMsg, true
	case stabilized > maximum:
		out.replicas, out.limitReason, out.limitMsg, out.limited = maximum, maxReason, maxMsg, true
	}
	return out
}

// rules is an autoscaler's behavior with the controller's default scale-down
// window filled in.
type rules struct {
	up, down *autoscalingv2.HPAScalingRules
}

// normalizeWithBehavior is Kubernetes' normalizeDesiredReplicasWithBehaviors:
// stabilization over each direction's window, then the rate policies.
func (h *history) normalizeWithBehavior(key client.ObjectKey, now time.Time, r rules, current, desired, minReplicas, maxReplicas int32) normalized {
	h.mu.Lock()
	defer h.mu.Unlock()
	upWindow := time.Duration(deref(r.up.StabilizationWindowSeconds)) * time.Second
	downWindow := time.Duration(deref(r.down.StabilizationWindowSeconds)) * time.Second
	upRec, downRec := desired, desired
	obsolete := now.Add(-max(upWindow, downWindow))
	recs := h.recommendations[key]
	kept := recs[:0]
	for _, rec := range recs {
		if rec.at.After(now.Add(-upWindow)) {
			upRec = min(upRec, rec.replicas)
		}
		if rec.at.After(now.Add(-downWindow)) {
			downRec = max(downRec, rec.replicas)
		}
		if !rec.at.Before(obsolete) {
			kept = append(kept, rec)
		}
	}
	h.recommendations[key] = append(kept, recommendation{at: now, replicas: desired})
	stabilized := current
	if stabilized < upRec {
		stabilized = upRec
	}
	if stabilized > downRec {
		stabilized = downRec
	}

	out := normalized{replicas: stabilized, limitReason: "DesiredWithinRange", limitMsg: "the desired count is within the acceptable range"}
	if stabilized != desired {
		out.stabilized = true
		out.stabilizeReason, out.stabMsg = "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
		if stabilized < desired { // held back by the scale-up window
			out.stabilizeReason, out.stabMsg = "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
		}
	}
	switch {
	case stabilized > current:
		limit := max(scaleUpLimit(current, h.up[key], h.down[key], r.up, now), current)
		maximum, reason, msg := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maximum > limit {
			maximum, reason, msg = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if stabilized > maximum {
			out.replicas, out.limited, out.limitReason, out.limitMsg = maximum, true, reason, msg
		}
	case stabilized < current:
		limit := min(scaleDownLimit(current, h.up[key], h.down[key], r.down, now), current)
		minimum, reason, msg := minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minimum < limit {
			minimum, reason, msg = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if stabilized < minimum {
			out.replicas, out.limited, out.limitReason, out.limitMsg = minimum, true, reason, msg
		}
	}
	return out
}

// recordScale remembers a change of replicas for the rate policies, and
// forgets events older than the longest policy period.
func (h *history) recordScale(key client.ObjectKey, now time.Time, r rules, from, to int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	prune := func(events []scaleEvent, rr *autoscalingv2.HPAScalingRules) []scaleEvent {
		var longest int32
		for _, p := range rr.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
		cutoff := now.Add(-time.Duration(longest) * time.Second)
		kept := events[:0]
		for _, e := range events {
			if e.at.After(cutoff) {
				kept = append(kept, e)
			}
		}
		return kept
	}
	switch {
	case to > from:
		h.up[key] = append(prune(h.up[key], r.up), scaleEvent{at: now, change: to - from})
	case to < from:
		h.down[key] = append(prune(h.down[key], r.down), scaleEvent{at: now, change: from - to})
	}
}

// changeInPeriod sums the changes of events within the last period.
func changeInPeriod(events []scaleEvent, periodSeconds int32, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(periodSeconds) * time.Second)
	var sum int32
	for _, e := range events {
		if e.at.After(cutoff) {
			sum += e.change
		}
	}
	return sum
}

// scaleUpLimit is the most replicas the scale-up policies allow now.
func scaleUpLimit(current int32, up, down []scaleEvent, r *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	return policyLimit(current, up, down, r, now, true)
}

// scaleDownLimit is the fewest replicas the scale-down policies allow now.
func scaleDownLimit(current int32, up, down []scaleEvent, r *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	return policyLimit(current, up, down, r, now, false)
}

// policyLimit is the bound r's policies put on a change from current in one
// direction. Each policy allows its Value (pods or percent) from the
// replicas at the start of its period (current minus the changes made
// within it); Max selects the policy allowing the largest change, Min the
// smallest, Disabled (or no policy) allows none.
func policyLimit(current int32, up, down []scaleEvent, r *autoscalingv2.HPAScalingRules, now time.Time, scalingUp bool) int32 {
	sel := autoscalingv2.MaxChangePolicySelect
	if r.SelectPolicy != nil {
		sel = *r.SelectPolicy
	}
	if sel == autoscalingv2.DisabledPolicySelect || len(r.Policies) == 0 {
		return current
	}
	result := int32(0)
	for i, p := range r.Policies {
		start := current - changeInPeriod(up, p.PeriodSeconds, now) + changeInPeriod(down, p.PeriodSeconds, now)
		var proposed int32
		switch {
		case scalingUp && p.Type == autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case scalingUp:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		case p.Type == autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		default:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		larger := proposed > result // a larger change: upwards when scaling up
		if !scalingUp {
			larger = proposed < result
		}
		if i == 0 || larger == (sel == autoscalingv2.MaxChangePolicySelect) {
			result = proposed
		}
	}
	return result
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
