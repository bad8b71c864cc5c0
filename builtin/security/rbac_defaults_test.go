package security_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Kubernetes' rbac/v1 defaulting fills an empty roleRef.apiGroup and the
// apiGroup of User and Group subjects; the upstream e2e suite binds roles that
// way (and its webhook specs failed here before).
var _ = Describe("RBAC binding defaults", func() {
	It("fills an empty roleRef.apiGroup and User/Group subject apiGroups", func(ctx SpecContext) {
		for _, tc := range []struct{ path, name string }{
			{"/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", "defaults-rb"},
			{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "defaults-crb"},
		} {
			r := asAdmin(ctx, http.MethodPost, tc.path, map[string]any{
				"metadata": map[string]any{"name": tc.name},
				"roleRef":  map[string]any{"kind": "ClusterRole", "name": "view"},
				"subjects": []any{
					map[string]any{"kind": "User", "name": "dave"},
					map[string]any{"kind": "Group", "name": "devs"},
					map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": "default"},
				},
			})
			Expect(r.code).To(Equal(http.StatusCreated), describe(r))
			Expect(r.body["roleRef"]).To(HaveKeyWithValue("apiGroup", "rbac.authorization.k8s.io"))
			subjects, _ := r.body["subjects"].([]any)
			Expect(subjects).To(HaveLen(3))
			Expect(subjects[0]).To(HaveKeyWithValue("apiGroup", "rbac.authorization.k8s.io"))
			Expect(subjects[1]).To(HaveKeyWithValue("apiGroup", "rbac.authorization.k8s.io"))
			Expect(subjects[2]).NotTo(HaveKey("apiGroup"))
		}
		// Another group is still refused.
		r := asAdmin(ctx, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
			"metadata": map[string]any{"name": "defaults-bad"},
			"roleRef":  map[string]any{"apiGroup": "example.com", "kind": "ClusterRole", "name": "view"},
		})
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), describe(r))
	})
})
