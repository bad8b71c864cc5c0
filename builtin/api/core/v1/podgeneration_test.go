package v1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("pod metadata.generation", func() {
	It("is 1 on create, unchanged by binding, status and metadata writes, +1 on spec changes", func(ctx SpecContext) {
		p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "generation"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		Expect(suite.c.Create(ctx, p)).To(Succeed())
		Expect(p.Generation).To(BeEquivalentTo(1))

		b := &corev1.Binding{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "generation"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
		Expect(suite.c.SubResource("binding").Create(ctx, p, b)).To(Succeed())
		Expect(suite.c.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		Expect(p.Spec.NodeName).To(Equal("n1"))
		Expect(p.Generation).To(BeEquivalentTo(1), "binding")

		p.Status.Phase = corev1.PodRunning
		Expect(suite.c.Status().Update(ctx, p)).To(Succeed())
		p.Labels = map[string]string{"a": "b"}
		Expect(suite.c.Update(ctx, p)).To(Succeed())
		Expect(p.Generation).To(BeEquivalentTo(1), "status and labels")

		p.Spec.ActiveDeadlineSeconds = api.Ptr(int64(30))
		Expect(suite.c.Update(ctx, p)).To(Succeed())
		Expect(p.Generation).To(BeEquivalentTo(2), "spec")
	})
})
