package podautoscaler

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// podMetric is one pod's usage of a resource: milli-units (millicores for
// CPU, millibytes for memory, as Kubernetes' metrics client reports them),
// measured over Window ending at Timestamp.
type podMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// calculator holds the knobs of the replica calculation.
type calculator struct {
	// tolerance: no scaling while |1 − usage/target| is within it;
	// upTolerance and downTolerance, when set, replace it for each direction
	// (an autoscaler's behavior.scaleUp/scaleDown.tolerance).
	tolerance                  float64
	upTolerance, downTolerance *float64
	// cpuInitializationPeriod: a pod this young counts for CPU only once it
	// is ready and measured for a full window since it became ready.
	cpuInitializationPeriod time.Duration
	// delayOfInitialReadinessStatus: an older pod that never became ready
	// is ignored for CPU while its readiness changed within this delay of
	// its start.
	delayOfInitialReadinessStatus time.Duration
}

// podGroups sorts a target's pods for one metric.
type podGroups struct {
	ready   int
	unready map[string]bool // pending, or CPU not yet initialised
	missing map[string]bool // running without a metric
	ignored map[string]bool // deleted or failed
}

// groupPods sorts pods into ready (with a usable metric), unready, missing
// and ignored, as Kubernetes' replica calculator does.
func (c calculator) groupPods(pods []*corev1.Pod, metrics map[string]podMetric, resource corev1.ResourceName, now time.Time) podGroups {
	g := podGroups{unready: map[string]bool{}, missing: map[string]bool{}, ignored: map[string]bool{}}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			g.ignored[pod.Name] = true
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			g.unready[pod.Name] = true
			continue
		}
		metric, found := metrics[pod.Name]
		if !found {
			g.missing[pod.Name] = true
			continue
		}
		if resource == corev1.ResourceCPU && c.cpuUnready(pod, metric, now) {
			g.unready[pod.Name] = true
			continue
		}
		g.ready++
	}
	return g
}

// cpuUnready reports whether a pod's CPU sample must not be trusted yet.
func (c calculator) cpuUnready(pod *corev1.Pod, metric podMetric, now time.Time) bool {
	var ready *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			ready = &pod.Status.Conditions[i]
		}
	}
	if ready == nil || pod.Status.StartTime == nil {
		return true
	}
	start, transition := pod.Status.StartTime.Time, ready.LastTransitionTime.Time
	if start.Add(c.cpuInitializationPeriod).After(now) {
		// Young pod: unready, or not measured for a full window since it
		// became ready.
		return ready.Status == corev1.ConditionFalse || metric.Timestamp.Before(transition.Add(metric.Window))
	}
	// Older pod: ignored only if it never became ready.
	return ready.Status == corev1.ConditionFalse && start.Add(c.delayOfInitialReadinessStatus).After(transition)
}

// podRequests sums each pod's container requests of resource (one
// container's when container is set).
func podRequests(pods []*corev1.Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, pod := range pods {
		var sum int64
		for _, ctr := range pod.Spec.Containers {
			if container != "" && ctr.Name != container {
				continue
			}
			q, ok := ctr.Resources.Requests[string(resource)]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, ctr.Name, pod.Name)
			}
			v, err := q.MilliValue()
			if err != nil {
				return nil, fmt.Errorf("request for %s in container %s of Pod %s: %w", resource, ctr.Name, pod.Name, err)
			}
			sum += v
		}
		out[pod.Name] = sum
	}
	return out, nil
}

var errNoMatchingPods = errors.New("no metrics returned matched known pods")

// utilizationRatio is Kubernetes' GetResourceUtilizationRatio: usage as a
// percentage of the requests of the pods with metrics, that over the target,
// and the average raw usage.
func utilizationRatio(metrics map[string]podMetric, requests map[string]int64, target int32) (ratio float64, utilization int32, rawAverage int64, err error) {
	var metricsTotal, requestsTotal int64
	n := 0
	for name, m := range metrics {
		req, ok := requests[name]
		if !ok {
			continue // a pod we have no spec for
		}
		metricsTotal += m.Value
		requestsTotal += req
		n++
	}
	if requestsTotal == 0 || n == 0 {
		return 0, 0, 0, errNoMatchingPods
	}
	utilization = int32(metricsTotal * 100 / requestsTotal)
	return float64(utilization) / float64(target), utilization, metricsTotal / int64(n), nil
}

// usageRatio is Kubernetes' GetMetricUsageRatio: average usage over the
// target average, and the average.
func usageRatio(metrics map[string]podMetric, target int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	avg := total / int64(len(metrics))
	return float64(avg) / float64(target), avg
}

// within reports whether ratio is close enough to 1 to leave replicas alone.
func (c calculator) within(ratio float64) bool {
	t := c.tolerance
	if ratio > 1.0 && c.upTolerance != nil {
		t = *c.upTolerance
	} else if ratio < 1.0 && c.downTolerance != nil {
		t = *c.downTolerance
	}
	return math.Abs(1.0-ratio) <= t
}

// utilizationReplicas computes the replica count for a target utilization
// (percent of requests): Kubernetes' GetResourceReplicas. pods are the
// target's pods, metrics their usage (consumed: entries are removed and
// added).
func (c calculator) utilizationReplicas(current int32, target int32, resource corev1.ResourceName, container string,
	pods []*corev1.Pod, metrics map[string]podMetric, now time.Time) (replicas int32, utilization int32, rawAverage int64, err error) {
	if len(pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	g := c.groupPods(pods, metrics, resource, now)
	removeMetrics(metrics, g.ignored)
	removeMetrics(metrics, g.unready)
	if len(metrics) == 0 {
		return 0, 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := podRequests(pods, container, resource)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio, utilization, rawAverage, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, 0, 0, err
	}
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if c.within(ratio) {
			return current, utilization, rawAverage, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), utilization, rawAverage, nil
	}
	if len(g.missing) > 0 {
		// Assume the worst for the direction we are going: missing pods use
		// all of their request (at least the target) when scaling down,
		// nothing when scaling up.
		fallback := int64(max(100, target))
		for name := range g.missing {
			if ratio < 1.0 {
				metrics[name] = podMetric{Value: requests[name] * fallback / 100}
			} else {
				metrics[name] = podMetric{}
			}
		}
	}
	if scaleUpWithUnready {
		for name := range g.unready {
			metrics[name] = podMetric{}
		}
	}
	newRatio, _, _, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, utilization, rawAverage, err
	}
	return c.rebalanced(current, ratio, newRatio, len(metrics)), utilization, rawAverage, nil
}

// averageValueReplicas computes the replica count for a target average
// usage per pod (milli-units): Kubernetes' calcPlainMetricReplicas.
func (c calculator) averageValueReplicas(current int32, target int64, resource corev1.ResourceName,
	pods []*corev1.Pod, metrics map[string]podMetric, now time.Time) (replicas int32, average int64, err error) {
	if len(pods) == 0 {
		return 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	g := c.groupPods(pods, metrics, resource, now)
	removeMetrics(metrics, g.ignored)
	removeMetrics(metrics, g.unready)
	if len(metrics) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, average := usageRatio(metrics, target)
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if c.within(ratio) {
			return current, average, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), average, nil
	}
	for name := range g.missing {
		if ratio < 1.0 {
			metrics[name] = podMetric{Value: target}
		} else {
			metrics[name] = podMetric{}
		}
	}
	if scaleUpWithUnready {
		for name := range g.unready {
			metrics[name] = podMetric{}
		}
	}
	newRatio, _ := usageRatio(metrics, target)
	return c.rebalanced(current, ratio, newRatio, len(metrics)), average, nil
}

// rebalanced is the count after the missing and unready pods were given
// assumed usage: no change if that made the ratio tolerable or flipped its
// direction, or if the result would move against the direction.
func (c calculator) rebalanced(current int32, ratio, newRatio float64, n int) int32 {
	if c.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current
	}
	replicas := int32(math.Ceil(newRatio * float64(n)))
	if (newRatio < 1.0 && replicas > current) || (newRatio > 1.0 && replicas < current) {
		return current
	}
	return replicas
}

func removeMetrics(metrics map[string]podMetric, names map[string]bool) {
	for name := range names {
		delete(metrics, name)
	}
}
