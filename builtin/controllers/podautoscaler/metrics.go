package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	metricsv1beta1 "github.com/converge-dev/converge/builtin/api/metrics/v1beta1"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
)

var errNoMetrics = errors.New("no metrics returned from resource metrics API")

// podMetrics reads the usage of resource by the selected pods from
// metrics.k8s.io (summed over each pod's containers, or one container's),
// as Kubernetes' resource metrics client does. A pod whose named container
// has no figure is left out.
func (r *reconciler) podMetrics(ctx context.Context, namespace string, sel labels.Selector, resource corev1.ResourceName, container string) (map[string]podMetric, error) {
	list := &metricsv1beta1.PodMetricsList{}
	if err := r.metrics.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("unable to get metrics for resource %s: unable to fetch metrics from resource metrics API: %w", resource, err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("unable to get metrics for resource %s: %w", resource, errNoMetrics)
	}
	out := make(map[string]podMetric, len(list.Items))
	for _, m := range list.Items {
		var sum int64
		found := false
		for _, c := range m.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Usage[string(resource)]
			if !ok {
				found = false
				break
			}
			v, err := q.MilliValue()
			if err != nil {
				found = false
				break
			}
			sum += v
			found = true
		}
		if found {
			out[m.Name] = podMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: sum}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unable to get metrics for resource %s: %w", resource, errNoMetrics)
	}
	return out, nil
}

// clientKey is the autoscaler's key in the controller's memory.
func clientKey(hpa *autoscalingv2.HorizontalPodAutoscaler) client.ObjectKey {
	return client.ObjectKey{Namespace: hpa.Namespace, Name: hpa.Name}
}
