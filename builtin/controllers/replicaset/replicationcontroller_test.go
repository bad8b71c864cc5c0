package replicaset_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

func newRC(ns, name string, replicas int32) *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: api.Ptr(replicas),
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

var _ = Describe("ReplicationController controller", func() {
	It("keeps the pods of a ReplicationController, owned by it, with its status and events", func(ctx SpecContext) {
		ns := namespace(ctx)
		rc := newRC(ns, "legacy", 2)
		Expect(c.Create(ctx, rc)).To(Succeed())
		Expect(rc.Spec.Selector).To(Equal(map[string]string{"app": "legacy"}), "the selector defaults to the template's labels")
		Expect(rc.Labels).To(Equal(map[string]string{"app": "legacy"}))

		Eventually(func() []corev1.Pod { return pods(ctx, ns, "legacy") }).Should(HaveLen(2))
		Consistently(func() []corev1.Pod { return pods(ctx, ns, "legacy") }, 300*time.Millisecond).Should(HaveLen(2))
		for _, p := range pods(ctx, ns, "legacy") {
			Expect(p.GenerateName).To(Equal("legacy-"))
			Expect(p.OwnerReferences).To(HaveLen(1))
			ref := p.OwnerReferences[0]
			Expect(ref.APIVersion).To(Equal("v1"))
			Expect(ref.Kind).To(Equal("ReplicationController"))
			Expect(ref.UID).To(Equal(rc.UID))
			Expect(*ref.Controller).To(BeTrue())
		}
		ps := pods(ctx, ns, "legacy")
		markReady(ctx, &ps[0])
		get := func(g Gomega) *corev1.ReplicationController {
			got := &corev1.ReplicationController{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy"}, got)).To(Succeed())
			return got
		}
		Eventually(func(g Gomega) {
			got := get(g)
			g.Expect(got.Status.Replicas).To(Equal(int32(2)))
			g.Expect(got.Status.FullyLabeledReplicas).To(Equal(int32(2)))
			g.Expect(got.Status.ReadyReplicas).To(Equal(int32(1)))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())
		Eventually(func() []string { return env.EventReasons(ctx, ns, "ReplicationController", "legacy") }).Should(ContainElement("SuccessfulCreate"))

		By("scaling down to one pod")
		Expect(c.Patch(ctx, &corev1.ReplicationController{ObjectMeta: api.ObjectMeta{Name: "legacy", Namespace: ns}},
			client.RawPatch(client.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1))))).To(Succeed())
		Eventually(func() []corev1.Pod { return pods(ctx, ns, "legacy") }).Should(HaveLen(1))
		Eventually(func(g Gomega) { g.Expect(get(g).Status.Replicas).To(Equal(int32(1))) }).Should(Succeed())
	})

	It("orphans the pods of a ReplicationController deleted without a propagation policy, as core/v1 does", func(ctx SpecContext) {
		ns := namespace(ctx)
		for _, name := range []string{"orphaning", "background"} {
			Expect(c.Create(ctx, newRC(ns, name, 0))).To(Succeed())
		}
		key := client.ObjectKey{Namespace: ns, Name: "orphaning"}
		Expect(c.Delete(ctx, &corev1.ReplicationController{ObjectMeta: api.ObjectMeta{Name: key.Name, Namespace: ns}})).To(Succeed())
		got := &corev1.ReplicationController{}
		Expect(c.Get(ctx, key, got)).To(Succeed(), "the garbage collector (not running here) removes the orphan finalizer")
		Expect(got.Finalizers).To(Equal([]string{api.FinalizerOrphanDependents}))
		Expect(got.DeletionTimestamp).NotTo(BeNil())
		Expect(c.Patch(ctx, got, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())

		Expect(c.Delete(ctx, &corev1.ReplicationController{ObjectMeta: api.ObjectMeta{Name: "background", Namespace: ns}},
			client.PropagationPolicy(api.DeletePropagationBackground))).To(Succeed())
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "background"}, got)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})

	It("refuses a ReplicationController whose selector does not match its template", func(ctx SpecContext) {
		rc := newRC(namespace(ctx), "bad", 1)
		rc.Spec.Selector = map[string]string{"app": "other"}
		err := c.Create(ctx, rc)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.template.metadata.labels: Invalid value"))
		Expect(err.Error()).To(ContainSubstring("`selector` does not match template `labels`"))
	})
})
