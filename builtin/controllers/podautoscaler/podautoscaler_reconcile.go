package podautoscaler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-logr/logr"

	autoscalingv1 "github.com/converge-dev/converge/builtin/api/autoscaling/v1"
	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

type reconciler struct {
	opts     Options
	reader   reader
	pods     podLister
	scale    scaler
	metrics  metricsLister
	status   statusWriter
	recorder recorder
	history  *history
	calc     calculator
}

// Reconcile syncs one autoscaler and asks to be called again after the sync
// period, as Kubernetes resyncs every autoscaler periodically: metrics change
// without any event.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := r.reader.Get(ctx, req.ObjectKey, hpa); err != nil {
		if apierrors.IsNotFound(err) {
			r.history.forget(req.ObjectKey)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get horizontalpodautoscaler %s: %w", req.ObjectKey, err)
	}
	if hpa.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if err := r.sync(ctx, hpa); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: r.opts.SyncPeriod}, nil
}

// sync is Kubernetes' reconcileAutoscaler: read the scale, compute the
// desired replicas from the metrics, normalize, rescale, write status.
func (r *reconciler) sync(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler) error {
	log := logr.FromContextOrDiscard(ctx)
	now := r.opts.Now()
	old := hpa.Status
	hpa.Status.Conditions = slices.Clone(hpa.Status.Conditions)
	ref := hpa.Spec.ScaleTargetRef
	reference := ref.Kind + "/" + ref.Name

	target := &api.Unstructured{Object: map[string]any{}}
	gv, err := api.ParseGroupVersion(ref.APIVersion)
	target.SetGroupVersionKind(gv.WithKind(ref.Kind))
	target.SetNamespace(hpa.Namespace)
	target.SetName(ref.Name)
	scale := &autoscalingv1.Scale{}
	if err == nil {
		err = r.scale.Get(ctx, target, scale)
	}
	if err != nil {
		r.recorder.Event(ctx, hpa, record.Warning, "FailedGetScale", err.Error())
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: "+err.Error(), now)
		return r.writeStatus(ctx, hpa, old, fmt.Errorf("get scale of %s: %w", reference, err))
	}
	setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale", now)
	current := scale.Spec.Replicas
	hpa.Status.CurrentReplicas = scale.Status.Replicas
	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}

	var (
		desired       int32
		rescaleReason string
	)
	switch {
	case current == 0 && minReplicas != 0:
		desired = 0
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero", now)
	case current > hpa.Spec.MaxReplicas:
		rescaleReason, desired = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas
	case current < minReplicas:
		rescaleReason, desired = "Current number of replicas below Spec.MinReplicas", minReplicas
	default:
		proposal, metricName, statuses, err := r.computeReplicas(ctx, hpa, scale, now)
		hpa.Status.CurrentMetrics = statuses
		if err != nil && proposal == -1 {
			r.recorder.Event(ctx, hpa, record.Warning, "FailedComputeMetricsReplicas", err.Error())
			return r.writeStatus(ctx, hpa, old, fmt.Errorf("compute replicas of %s: %w", reference, err))
		}
		if err != nil {
			log.V(1).Info("Some metrics failed; scaling on the others", "hpa", hpa.Name, "error", err.Error())
		}
		desired = r.normalize(hpa, now, current, proposal, minReplicas).replicas
		rescaleReason = metricName + " above target"
		if desired < current {
			rescaleReason = "All metrics below target"
		}
	}

	hpa.Status.DesiredReplicas = desired
	if desired != current {
		scale.Spec.Replicas = desired
		if err := r.scale.Update(ctx, target, scale); err != nil {
			r.recorder.Event(ctx, hpa, record.Warning, "FailedRescale", fmt.Sprintf("New size: %d; reason: %s; error: %v", desired, rescaleReason, err))
			setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: "+err.Error(), now)
			return r.writeStatus(ctx, hpa, old, fmt.Errorf("rescale %s: %w", reference, err))
		}
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", fmt.Sprintf("the HPA controller was able to update the target scale to %d", desired), now)
		r.recorder.Event(ctx, hpa, record.Normal, "SuccessfulRescale", fmt.Sprintf("New size: %d; reason: %s", desired, rescaleReason))
		r.history.recordScale(clientKey(hpa), now, r.rules(hpa), current, desired)
		log.Info("Rescaled", "hpa", hpa.Name, "target", reference, "from", current, "to", desired, "reason", rescaleReason)
		t := api.NewTime(now)
		hpa.Status.LastScaleTime = &t
	}
	return r.writeStatus(ctx, hpa, old, nil)
}

// normalize brings the metrics' proposal within stabilization, rate and
// min/max limits and records why in the conditions.
func (r *reconciler) normalize(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time, current, proposal, minReplicas int32) normalized {
	key := clientKey(hpa)
	var n normalized
	if hpa.Spec.Behavior == nil {
		n = r.history.normalize(key, now, r.opts.DownscaleStabilization, current, proposal, minReplicas, hpa.Spec.MaxReplicas)
	} else {
		n = r.history.normalizeWithBehavior(key, now, r.rules(hpa), current, proposal, minReplicas, hpa.Spec.MaxReplicas)
	}
	if n.stabilized {
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, n.stabilizeReason, n.stabMsg, now)
	} else {
		setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size", now)
	}
	status := corev1.ConditionFalse
	if n.limited {
		status = corev1.ConditionTrue
	}
	setCondition(hpa, autoscalingv2.ScalingLimited, status, n.limitReason, n.limitMsg, now)
	return n
}

// rules are the autoscaler's behavior with the controller's scale-down
// window where the autoscaler sets none (Kubernetes'
// maybeInitScaleDownStabilizationWindow). Only for autoscalers with behavior.
func (r *reconciler) rules(hpa *autoscalingv2.HorizontalPodAutoscaler) rules {
	b := hpa.Spec.Behavior
	if b == nil {
		return rules{up: &autoscalingv2.HPAScalingRules{}, down: &autoscalingv2.HPAScalingRules{}}
	}
	filled := *b // defaulted again: a behavior written through autoscaling/v1 was not
	autoscalingv2.DefaultBehavior(&filled)
	up, down := filled.ScaleUp, filled.ScaleDown
	if down.StabilizationWindowSeconds == nil {
		d := *down
		d.StabilizationWindowSeconds = api.Ptr(int32(r.opts.DownscaleStabilization / time.Second))
		down = &d
	}
	return rules{up: up, down: down}
}

// computeReplicas is Kubernetes' computeReplicasForMetrics: the highest
// proposal over the metrics; -1 with an error when no metric worked, or when
// one failed and the others would scale down.
func (r *reconciler) computeReplicas(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, scale *autoscalingv1.Scale, now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	if scale.Status.Selector == "" {
		r.recorder.Event(ctx, hpa, record.Warning, "SelectorRequired", errNoSelector.Error())
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", errNoSelector.Error(), now)
		return -1, "", nil, errNoSelector
	}
	sel, err := labels.Parse(scale.Status.Selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		r.recorder.Event(ctx, hpa, record.Warning, "InvalidSelector", msg)
		setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", msg, now)
		return -1, "", nil, fmt.Errorf("%s", msg)
	}
	specReplicas := scale.Spec.Replicas
	statuses := make([]autoscalingv2.MetricStatus, len(hpa.Spec.Metrics))
	replicas, metricName := int32(-1), ""
	var (
		invalid  int
		firstErr error
	)
	for i, spec := range hpa.Spec.Metrics {
		proposal, name, status, reason, err := r.computeMetric(ctx, hpa, spec, specReplicas, sel, now)
		if err != nil {
			if invalid == 0 {
				firstErr = err
			}
			invalid++
			r.recorder.Event(ctx, hpa, record.Warning, reason, err.Error())
			setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, err.Error(), now)
			statuses[i] = autoscalingv2.MetricStatus{Type: spec.Type}
			continue
		}
		statuses[i] = status
		if replicas == -1 || proposal > replicas {
			replicas, metricName = proposal, name
		}
	}
	if invalid >= len(hpa.Spec.Metrics) || (invalid > 0 && replicas < specReplicas) {
		return -1, "", statuses, fmt.Errorf("invalid metrics (%d invalid out of %d), first error is: %w", invalid, len(hpa.Spec.Metrics), firstErr)
	}
	setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound",
		fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s", metricName), now)
	return replicas, metricName, statuses, firstErr
}

// computeMetric computes one metric's proposal. reason names the failure
// for events and the ScalingActive condition.
func (r *reconciler) computeMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec, current int32,
	sel labels.Selector, now time.Time) (proposal int32, name string, status autoscalingv2.MetricStatus, reason string, err error) {
	var (
		resource  corev1.ResourceName
		container string
		target    autoscalingv2.MetricTarget
	)
	switch {
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		resource, target = spec.Resource.Name, spec.Resource.Target
		reason = "FailedGetResourceMetric"
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		resource, target, container = spec.ContainerResource.Name, spec.ContainerResource.Target, spec.ContainerResource.Container
		reason = "FailedGetContainerResourceMetric"
	default:
		// Custom and external metrics need an adapter serving
		// custom.metrics.k8s.io / external.metrics.k8s.io; there is none.
		reason = "FailedGet" + string(spec.Type) + "Metric"
		return 0, "", status, reason, fmt.Errorf("unable to get %s metric: the %s metrics APIs are not served", spec.Type, apiFor(spec.Type))
	}
	calc := r.calc
	if b := hpa.Spec.Behavior; b != nil {
		calc.upTolerance, calc.downTolerance = tolerance(b.ScaleUp), tolerance(b.ScaleDown)
	}
	pods, err := r.pods.List(ctx, client.InNamespace(hpa.Namespace), client.MatchingLabelSelector{Selector: sel})
	if err != nil {
		return 0, "", status, reason, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	metrics, err := r.podMetrics(ctx, hpa.Namespace, sel, resource, container)
	if err != nil {
		return 0, "", status, reason, fmt.Errorf("failed to get %s utilization: %w", resource, err)
	}
	value := autoscalingv2.MetricValueStatus{}
	switch {
	case target.AverageUtilization != nil:
		name = string(resource) + " resource utilization (percentage of request)"
		replicas, utilization, raw, err := calc.utilizationReplicas(current, *target.AverageUtilization, resource, container, pods, metrics, now)
		if err != nil {
			return 0, "", status, reason, fmt.Errorf("failed to get %s utilization: %w", resource, err)
		}
		value.AverageUtilization, value.AverageValue = api.Ptr(utilization), api.Ptr(milliQuantity(raw))
		proposal = replicas
	case target.AverageValue != nil:
		name = string(resource) + " resource"
		want, qerr := target.AverageValue.MilliValue()
		if qerr != nil || want <= 0 {
			return 0, "", status, reason, fmt.Errorf("invalid target averageValue %q for %s", target.AverageValue.S, resource)
		}
		replicas, avg, err := calc.averageValueReplicas(current, want, resource, pods, metrics, now)
		if err != nil {
			return 0, "", status, reason, fmt.Errorf("failed to get %s usage: %w", resource, err)
		}
		value.AverageValue = api.Ptr(milliQuantity(avg))
		proposal = replicas
	default:
		return 0, "", status, reason, fmt.Errorf("invalid %s metric source: neither a utilization target nor a value target was set", resource)
	}
	if container != "" {
		name = string(resource) + " container resource utilization (percentage of request)"
		status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{
			Name: resource, Container: container, Current: value}}
	} else {
		status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: resource, Current: value}}
	}
	return proposal, name, status, "", nil
}

// tolerance is a rule's own tolerance (a fraction: "0.05"), if any.
func tolerance(r *autoscalingv2.HPAScalingRules) *float64 {
	if r == nil || r.Tolerance == nil {
		return nil
	}
	v, err := r.Tolerance.Float64()
	if err != nil {
		return nil
	}
	return &v
}

func apiFor(t autoscalingv2.MetricSourceType) string {
	if t == autoscalingv2.ExternalMetricSourceType {
		return "external"
	}
	return "custom"
}

// milliQuantity renders milli-units as a quantity ("250m", or whole units).
func milliQuantity(milli int64) api.Quantity {
	if milli%1000 == 0 {
		return api.Quantity{S: strconv.FormatInt(milli/1000, 10)}
	}
	return api.Quantity{S: strconv.FormatInt(milli, 10) + "m"}
}

// writeStatus writes the status when it changed and returns cause (the
// write's own error joined to it).
func (r *reconciler) writeStatus(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, old autoscalingv2.HorizontalPodAutoscalerStatus, cause error) error {
	hpa.Status.ObservedGeneration = api.Ptr(hpa.Generation)
	if statusEqual(old, hpa.Status) {
		return cause
	}
	if err := r.status.Update(ctx, hpa); err != nil {
		if cause != nil {
			return fmt.Errorf("%w (and update status: %v)", cause, err)
		}
		return fmt.Errorf("update status of horizontalpodautoscaler %s/%s: %w", hpa.Namespace, hpa.Name, err)
	}
	return cause
}

func statusEqual(a, b autoscalingv2.HorizontalPodAutoscalerStatus) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// setCondition sets a condition, keeping its transition time when the status
// does not change.
func setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) {
	for i := range hpa.Status.Conditions {
		c := &hpa.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = api.NewTime(now.UTC().Truncate(time.Second))
		}
		c.Status, c.Reason, c.Message = status, reason, msg
		return
	}
	hpa.Status.Conditions = append(hpa.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: api.NewTime(now.UTC().Truncate(time.Second))})
}
