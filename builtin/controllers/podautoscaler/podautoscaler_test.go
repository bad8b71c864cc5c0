package podautoscaler_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

func newHPA(ns, apiVersion, kind, name string, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: name},
			MinReplicas:    api.Ptr(minReplicas), MaxReplicas: maxReplicas,
		}}
}

// condition returns the autoscaler's condition of type t once it has one.
func condition(g Gomega, ctx SpecContext, hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	got := &autoscalingv2.HorizontalPodAutoscaler{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(hpa), got)).To(Succeed())
	for _, c := range got.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: api.Ptr(replicas), Selector: &api.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}}
}

var _ = Describe("The autoscaler", func() {
	It("brings a custom resource above maxReplicas down through its scale subresource", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		w := &api.Unstructured{Object: map[string]any{"apiVersion": "hpa.converge.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": ns}, "spec": map[string]any{"replicas": int64(5)}}}
		// The client's mapper learns the new kind from discovery.
		Eventually(func() error { return env.Client.Create(ctx, w) }).Should(Succeed())
		hpa := newHPA(ns, "hpa.converge.dev/v1", "Widget", "w", 1, 3)
		Expect(env.Client.Create(ctx, hpa)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
			replicas, _ := api.NestedInt64(w.Object, "spec", "replicas")
			g.Expect(replicas).To(Equal(int64(3)))
		}).Should(Succeed())
		Eventually(func() []string { return env.Events(ctx, hpa) }).Should(
			ContainElement(ContainSubstring("New size: 3; reason: Current number of replicas above Spec.MaxReplicas")))
		// Within range, the metrics need the pods' selector, which this
		// widget's status does not publish.
		Eventually(func(g Gomega) {
			g.Expect(condition(g, ctx, hpa, autoscalingv2.ScalingActive).Reason).To(Equal("InvalidSelector"))
		}).Should(Succeed())
	})

	It("brings a StatefulSet below minReplicas up", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		labels := map[string]string{"app": "db"}
		sts := &appsv1.StatefulSet{ObjectMeta: api.ObjectMeta{Name: "db", Namespace: ns}, Spec: appsv1.StatefulSetSpec{
			Replicas: api.Ptr(int32(1)), Selector: &api.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		Expect(env.Client.Create(ctx, sts)).To(Succeed())
		Expect(env.Client.Create(ctx, newHPA(ns, "apps/v1", "StatefulSet", "db", 2, 4))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
			g.Expect(*sts.Spec.Replicas).To(Equal(int32(2)))
		}).Should(Succeed())
	})

	It("does not scale a target scaled to zero", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		Expect(env.Client.Create(ctx, deployment(ns, "idle", 0))).To(Succeed())
		hpa := newHPA(ns, "apps/v1", "Deployment", "idle", 1, 3)
		Expect(env.Client.Create(ctx, hpa)).To(Succeed())
		Eventually(func(g Gomega) {
			c := condition(g, ctx, hpa, autoscalingv2.ScalingActive)
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("ScalingDisabled"))
		}).Should(Succeed())
		d := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "idle"}, d)).To(Succeed())
		Expect(*d.Spec.Replicas).To(BeZero())
	})

	It("reports a missing target and missing metrics", func(ctx SpecContext) {
		ns := env.Namespace(ctx)
		missing := newHPA(ns, "apps/v1", "Deployment", "nothing", 1, 3)
		Expect(env.Client.Create(ctx, missing)).To(Succeed())
		Eventually(func(g Gomega) {
			c := condition(g, ctx, missing, autoscalingv2.AbleToScale)
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("FailedGetScale"))
		}).Should(Succeed())
		Eventually(func() []string { return env.EventReasons(ctx, ns, "HorizontalPodAutoscaler", "nothing") }).Should(ContainElement("FailedGetScale"))

		Expect(env.Client.Create(ctx, deployment(ns, "web", 2))).To(Succeed())
		unmeasured := newHPA(ns, "apps/v1", "Deployment", "web", 1, 3) // defaulted: 80% CPU
		Expect(env.Client.Create(ctx, unmeasured)).To(Succeed())
		Eventually(func(g Gomega) {
			c := condition(g, ctx, unmeasured, autoscalingv2.ScalingActive)
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(c.Reason).To(Equal("FailedGetResourceMetric"))
		}).Should(Succeed())
		Eventually(func() []string { return env.EventReasons(ctx, ns, "HorizontalPodAutoscaler", "web") }).Should(
			ContainElements("FailedGetResourceMetric", "FailedComputeMetricsReplicas"))
		d := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
		Expect(*d.Spec.Replicas).To(Equal(int32(2)), "no metrics: no scaling")
	})
})
