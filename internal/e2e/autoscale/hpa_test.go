package autoscale

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	autoscalingv1 "github.com/converge-dev/converge/builtin/api/autoscaling/v1"
	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("HorizontalPodAutoscaler", func() {
	It("scales a Deployment of CPU-burning process pods up under load and back down after it", func(ctx SpecContext) {
		ns := &corev1.Namespace{ObjectMeta: api.ObjectMeta{GenerateName: "hpa-"}}
		Expect(c.Create(ctx, ns)).To(Succeed())
		stopFile := filepath.Join(GinkgoT().TempDir(), "stop")

		// Each pod burns a core until stopFile exists, then idles.
		labels := map[string]string{"app": "burner"}
		d := &appsv1.Deployment{ObjectMeta: api.ObjectMeta{Name: "burner", Namespace: ns.Name}, Spec: appsv1.DeploymentSpec{
			Replicas: api.Ptr(int32(1)),
			Selector: &api.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: api.Ptr(int64(0)),
				Containers: []corev1.Container{{Name: "burn", Image: "busybox",
					Command:   []string{"sh", "-c", "while [ ! -e " + stopFile + " ]; do :; done; exec sleep 3600"},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": {S: "100m"}}}}},
			}},
		}}
		Expect(c.Create(ctx, d)).To(Succeed())
		DeferCleanup(func() { _ = os.WriteFile(stopFile, nil, 0o600) }) // never leave burners behind

		hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: api.ObjectMeta{Name: "burner", Namespace: ns.Name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "burner"},
				MinReplicas:    api.Ptr(int32(1)), MaxReplicas: 2,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: api.Ptr(int32(50))}}}},
			}}
		Expect(c.Create(ctx, hpa)).To(Succeed())

		key := client.ObjectKey{Namespace: ns.Name, Name: "burner"}
		got := &autoscalingv2.HorizontalPodAutoscaler{}
		condition := func(t autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
			for _, cond := range got.Status.Conditions {
				if cond.Type == t {
					return cond
				}
			}
			return autoscalingv2.HorizontalPodAutoscalerCondition{}
		}
		By("scaling up on the burner's measured CPU (about 1000% of its request)")
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, key, got)).To(Succeed())
			g.Expect(got.Status.DesiredReplicas).To(Equal(int32(2)))
			g.Expect(got.Status.CurrentMetrics).To(HaveLen(1))
			g.Expect(*got.Status.CurrentMetrics[0].Resource.Current.AverageUtilization).To(BeNumerically(">", 200))
		}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("scaled up: %s, %+v\n", autoscalingv2.Targets(got), got.Status)
		Expect(condition(autoscalingv2.ScalingActive).Reason).To(Equal("ValidMetricFound"))
		Expect(condition(autoscalingv2.ScalingLimited)).To(And(
			HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "TooManyReplicas")))
		Expect(c.Get(ctx, key, d)).To(Succeed())
		Expect(*d.Spec.Replicas).To(Equal(int32(2)))
		v1 := &autoscalingv1.HorizontalPodAutoscaler{}
		Expect(c.Get(ctx, key, v1)).To(Succeed(), "the autoscaler read as autoscaling/v1")
		Expect(*v1.Spec.TargetCPUUtilizationPercentage).To(Equal(int32(50)))
		Expect(*v1.Status.CurrentCPUUtilizationPercentage).To(BeNumerically(">", 200))

		By("scaling back down once the load stops and the stabilization window passed")
		Expect(os.WriteFile(stopFile, nil, 0o600)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, key, d)).To(Succeed())
			g.Expect(*d.Spec.Replicas).To(Equal(int32(1)))
		}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Expect(c.Get(ctx, key, got)).To(Succeed())
		GinkgoWriter.Printf("scaled down: %s, %+v\n", autoscalingv2.Targets(got), got.Status)
		Expect(got.Status.LastScaleTime).NotTo(BeNil())

		events := &corev1.EventList{}
		Expect(c.List(ctx, events, client.InNamespace(ns.Name))).To(Succeed())
		var rescales []string
		for _, e := range events.Items {
			if e.Reason == "SuccessfulRescale" && e.InvolvedObject.Kind == "HorizontalPodAutoscaler" {
				rescales = append(rescales, e.Message)
			}
		}
		Expect(rescales).To(ContainElements(
			"New size: 2; reason: cpu resource utilization (percentage of request) above target",
			"New size: 1; reason: All metrics below target"))
	}, SpecTimeout(90*time.Second))
})
