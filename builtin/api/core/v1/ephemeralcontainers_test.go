package v1_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

var _ = Describe("pods/NAME/ephemeralcontainers", func() {
	const path = "/api/v1/namespaces/default/pods/eph/ephemeralcontainers"
	strategic := func(ctx SpecContext, body string) (int, map[string]any) {
		GinkgoHelper()
		return sendAs(ctx, http.MethodPatch, path, "application/strategic-merge-patch+json", []byte(body))
	}
	causes := func(out map[string]any) []any {
		return api.NestedSlice(out, "details", "causes")
	}

	It("adds ephemeral containers and refuses what Kubernetes refuses", func(ctx SpecContext) {
		newPod(ctx, "eph", "")
		code, out := post(ctx, "/api/v1/namespaces/default/pods/eph/binding", bindingBody("eph", agentless))
		Expect(code).To(Equal(http.StatusCreated), "%v", out)

		By("GET returns the pod")
		code, out = send(ctx, http.MethodGet, path, "")
		Expect(code).To(Equal(http.StatusOK), "%v", out)
		Expect(out).To(HaveKeyWithValue("kind", "Pod"))

		p, err := getPod(ctx, "eph")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Generation).To(Equal(int64(1)), "a binding does not move the generation")

		By("a strategic merge patch, as kubectl debug sends, adds one and changes nothing else")
		code, out = strategic(ctx, `{"spec":{"containers":[{"name":"main","image":"other:2"}],
			"ephemeralContainers":[{"name":"debugger","image":"busybox","command":["sh"],"stdin":true,"tty":true,"targetContainerName":"main"}]}}`)
		Expect(code).To(Equal(http.StatusOK), "%v", out)
		p, err = getPod(ctx, "eph")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Generation).To(Equal(int64(2)), "the spec changed")
		Expect(p.Spec.Containers[0].Image).To(Equal("example/app:1"))
		Expect(p.Spec.EphemeralContainers).To(HaveLen(1))
		ec := p.Spec.EphemeralContainers[0]
		Expect(ec.TargetContainerName).To(Equal("main"))
		Expect(ec.TerminationMessagePolicy).NotTo(BeEmpty(), "defaulted")

		By("a merge patch adding a second keeps the first (strategic merge keyed by name)")
		code, out = strategic(ctx, `{"spec":{"ephemeralContainers":[{"name":"second","image":"busybox"}]}}`)
		Expect(code).To(Equal(http.StatusOK), "%v", out)
		p, err = getPod(ctx, "eph")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Spec.EphemeralContainers).To(HaveLen(2))

		By("ports, probes and resources are forbidden")
		code, out = strategic(ctx, `{"spec":{"ephemeralContainers":[{"name":"bad","image":"busybox","ports":[{"containerPort":80}],
			"readinessProbe":{"exec":{"command":["true"]}},"resources":{"limits":{"cpu":"1"}}}]}}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
		Expect(causes(out)).To(ContainElements(
			HaveKeyWithValue("field", MatchRegexp(`^spec\.ephemeralContainers\[\d\]\.ports$`)),
			HaveKeyWithValue("field", MatchRegexp(`^spec\.ephemeralContainers\[\d\]\.readinessProbe$`)),
			HaveKeyWithValue("field", MatchRegexp(`^spec\.ephemeralContainers\[\d\]\.resources$`))), "%v", out)

		By("a name already used by any container is a duplicate")
		code, out = strategic(ctx, `{"spec":{"ephemeralContainers":[{"name":"main","image":"busybox"}]}}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
		Expect(causes(out)).To(ContainElement(HaveKeyWithValue("reason", "FieldValueDuplicate")))

		By("the target must be one of the pod's containers")
		code, out = strategic(ctx, `{"spec":{"ephemeralContainers":[{"name":"third","image":"busybox","targetContainerName":"nope"}]}}`)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
		Expect(causes(out)).To(ContainElement(HaveKeyWithValue("field", MatchRegexp(`^spec\.ephemeralContainers\[\d\]\.targetContainerName$`))))

		By("existing ones can be neither removed nor changed")
		code, out = sendAs(ctx, http.MethodPatch, path, "application/json-patch+json", []byte(`[{"op":"remove","path":"/spec/ephemeralContainers/1"}]`))
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
		Expect(out["message"]).To(MatchRegexp(`existing ephemeral containers "(second|debugger)" may not be removed`))
		code, out = sendAs(ctx, http.MethodPatch, path, "application/json-patch+json", []byte(`[{"op":"replace","path":"/spec/ephemeralContainers/0/image","value":"alpine"}]`))
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", out)
		Expect(out["message"]).To(MatchRegexp(`existing ephemeral containers "(second|debugger)" may not be changed`))

		By("a PUT of the pod with a stale resourceVersion conflicts")
		p.ResourceVersion = "1"
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "put", Image: "busybox"}})
		Expect(suite.c.SubResource("ephemeralcontainers").Update(ctx, p, p)).NotTo(Succeed())

		By("a regular update of the pod cannot add one")
		p, err = getPod(ctx, "eph")
		Expect(err).NotTo(HaveOccurred())
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "direct", Image: "busybox"}})
		err = suite.c.Update(ctx, p)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("pod updates may not change fields"))

		By("a PUT through the subresource adds one")
		p, err = getPod(ctx, "eph")
		Expect(err).NotTo(HaveOccurred())
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "put", Image: "busybox"}})
		Expect(suite.c.SubResource("ephemeralcontainers").Update(ctx, p, p)).To(Succeed())
		p, err = getPod(ctx, "eph")
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Spec.EphemeralContainers).To(HaveLen(3))
	})
})
