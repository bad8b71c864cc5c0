package v1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	networkingv1 "github.com/converge-dev/converge/builtin/api/networking/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// Kubernetes' status strategies of the older kinds keep the metadata a
// status write sends (the upstream "... status endpoints" conformance specs
// patch annotations through /status); Deployment keeps its labels; the newer
// kinds (ServiceCIDR) and custom resources take status only.
var _ = Describe("metadata in status writes", func() {
	patch := client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"labels":{"l":"new"},"annotations":{"patchedstatus":"true"}},"status":{}}`))

	It("is taken for Services: labels and annotations", func(ctx SpecContext) {
		svc := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "status-meta", Labels: map[string]string{"l": "old"}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		Expect(suite.c.Create(ctx, svc)).To(Succeed())
		Expect(suite.c.Status().Patch(ctx, svc, patch)).To(Succeed())
		Expect(svc.Labels).To(HaveKeyWithValue("l", "new"))
		Expect(svc.Annotations).To(HaveKeyWithValue("patchedstatus", "true"))
	})

	It("is taken for Deployments but their labels", func(ctx SpecContext) {
		labels := map[string]string{"l": "old"}
		d := &appsv1.Deployment{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "status-meta", Labels: labels},
			Spec: appsv1.DeploymentSpec{Selector: &api.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}}}
		Expect(suite.c.Create(ctx, d)).To(Succeed())
		Expect(suite.c.Status().Patch(ctx, d, patch)).To(Succeed())
		Expect(d.Labels).To(HaveKeyWithValue("l", "old"))
		Expect(d.Annotations).To(HaveKeyWithValue("patchedstatus", "true"))
	})

	It("is ignored for ServiceCIDRs", func(ctx SpecContext) {
		sc := &networkingv1.ServiceCIDR{ObjectMeta: api.ObjectMeta{Name: "status-meta", Labels: map[string]string{"l": "old"}},
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"192.0.2.0/24"}}}
		Expect(suite.c.Create(ctx, sc)).To(Succeed())
		Expect(suite.c.Status().Patch(ctx, sc, patch)).To(Succeed())
		Expect(sc.Labels).To(HaveKeyWithValue("l", "old"))
		Expect(sc.Annotations).NotTo(HaveKey("patchedstatus"))
	})
})
