package v1_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// post sends body as JSON to path and returns the status code and the decoded
// response.
func post(ctx SpecContext, path, body string) (int, map[string]any) {
	GinkgoHelper()
	return send(ctx, http.MethodPost, path, body)
}

func bindingBody(name, node string) string {
	return `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"` + name + `"},"target":{"kind":"Node","name":"` + node + `"}}`
}

// expectBound checks that name is bound to node with a PodScheduled condition.
func expectBound(ctx SpecContext, name, node string) {
	GinkgoHelper()
	p, err := getPod(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	Expect(p.Spec.NodeName).To(Equal(node))
	Expect(p.Status.Conditions).To(ContainElement(And(
		HaveField("Type", corev1.PodConditionType("PodScheduled")),
		HaveField("Status", corev1.ConditionTrue))))
}

var _ = Describe("Binding a pod to a node", func() {
	It("binds through pods/NAME/binding and refuses a second binding", func(ctx SpecContext) {
		newPod(ctx, "bind-sub", "")
		code, out := post(ctx, "/api/v1/namespaces/default/pods/bind-sub/binding", bindingBody("bind-sub", agentless))
		Expect(code).To(Equal(http.StatusCreated), "%v", out)
		Expect(out).To(HaveKeyWithValue("status", "Success"))
		expectBound(ctx, "bind-sub", agentless)

		code, out = post(ctx, "/api/v1/namespaces/default/pods/bind-sub/binding", bindingBody("bind-sub", "other"))
		Expect(code).To(Equal(http.StatusConflict), "%v", out)
		Expect(out["message"]).To(ContainSubstring(`is already assigned to node "` + agentless + `"`))
		expectBound(ctx, "bind-sub", agentless)
	})

	// Kubernetes serves POST namespaces/NS/bindings as the binding of the pod
	// the body names; nothing is stored under bindings.
	It("binds through the bindings resource, storing no Binding", func(ctx SpecContext) {
		newPod(ctx, "bind-res", "")
		b := &corev1.Binding{ObjectMeta: api.ObjectMeta{Name: "bind-res", Namespace: "default"},
			Target: corev1.ObjectReference{Kind: "Node", Name: agentless}}
		Expect(suite.c.Create(ctx, b)).To(Succeed())
		expectBound(ctx, "bind-res", agentless)

		// A second binding of the same pod is a conflict, not a second object.
		err := suite.c.Create(ctx, &corev1.Binding{ObjectMeta: api.ObjectMeta{Name: "bind-res", Namespace: "default"},
			Target: corev1.ObjectReference{Kind: "Node", Name: "other"}})
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		expectBound(ctx, "bind-res", agentless)

		// bindings serves create only: there is nothing to read back.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, suite.env.URL+"/api/v1/namespaces/default/bindings/bind-res", nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed))
	})

	DescribeTable("refuses bad bindings with a Status",
		func(ctx SpecContext, path, body string, wantCode int, wantReason, wantMessage string) {
			code, out := post(ctx, path, body)
			Expect(code).To(Equal(wantCode), "%v", out)
			Expect(out).To(HaveKeyWithValue("kind", "Status"))
			Expect(out).To(HaveKeyWithValue("reason", wantReason))
			Expect(out["message"]).To(ContainSubstring(wantMessage))
		},
		Entry("no name", "/api/v1/namespaces/default/bindings",
			`{"apiVersion":"v1","kind":"Binding","target":{"name":"n"}}`,
			http.StatusUnprocessableEntity, "Invalid", "metadata.name: Required value"),
		Entry("a pod that does not exist", "/api/v1/namespaces/default/bindings",
			bindingBody("no-such-pod", "n"), http.StatusNotFound, "NotFound", `pods "no-such-pod" not found`),
		Entry("another namespace in the body", "/api/v1/namespaces/default/bindings",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"x","namespace":"kube-system"},"target":{"name":"n"}}`,
			http.StatusBadRequest, "BadRequest", "does not match the namespace sent on the request"),
		Entry("another kind", "/api/v1/namespaces/default/bindings",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}`,
			http.StatusBadRequest, "BadRequest", "does not match the expected kind (Binding)"),
		Entry("no target", "/api/v1/namespaces/default/pods/x/binding",
			`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"x"}}`,
			http.StatusUnprocessableEntity, "Invalid", "target.name: Required value"),
	)
})
