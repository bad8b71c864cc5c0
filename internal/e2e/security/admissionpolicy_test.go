package security

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
)

var _ = Describe("ValidatingAdmissionPolicy with the authorizer and audit annotations", Ordered, func() {
	var (
		cp         *controlplane.ControlPlane
		admin, bob identity
		auditLog   string
	)
	const cms = "/api/v1/namespaces/default/configmaps"
	const policyName = "secrets-readers.example.com"

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		auditLog = filepath.Join(dir, "audit.log")
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true, AuditLogPath: auditLog})
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin = newIdentity(p, "test-admin", "system:masters")
		bob = newIdentity(p, "bob", "devs")
		for _, o := range []struct {
			path string
			obj  map[string]any
		}{
			{"/apis/rbac.authorization.k8s.io/v1/clusterroles", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
				"metadata": map[string]any{"name": "cm-writer"},
				"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"create"}}}}},
			{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
				"metadata": map[string]any{"name": "bob-cm-writer"},
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-writer"},
				"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}}}},
			{"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", map[string]any{
				"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": map[string]any{"name": policyName},
				"spec": map[string]any{
					"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
						"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"}}}},
					"validations": []any{map[string]any{
						"expression": "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()",
						"message":    "only those who may list secrets may create configmaps"}},
					"auditAnnotations": []any{map[string]any{"key": "creator", "valueExpression": "request.userInfo.username"}},
				}}},
			{"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", map[string]any{
				"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": map[string]any{"name": "secrets-readers"},
				"spec": map[string]any{"policyName": policyName, "validationActions": []any{"Deny", "Audit"}}}},
		} {
			r := call(ctx, admin.http, http.MethodPost, cp.URL()+o.path, o.obj)
			Expect(r.code).To(Equal(http.StatusCreated), r.String())
		}
	})

	It("asks the API server's authorizer, denies with the policy's message and annotates the audit event", func(ctx SpecContext) {
		cm := func(name string) map[string]any {
			return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}
		}
		Eventually(func(g Gomega) {
			r := call(ctx, bob.http, http.MethodPost, cp.URL()+cms, cm("from-bob"))
			g.Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.String())
			g.Expect(r.body["message"]).To(Equal(`configmaps "from-bob" is forbidden: ValidatingAdmissionPolicy '` + policyName +
				`' with binding 'secrets-readers' denied request: only those who may list secrets may create configmaps`))
		}).Should(Succeed())
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+cms, cm("from-admin"))
		Expect(r.code).To(Equal(http.StatusCreated), r.String())

		type event struct {
			User        struct{ Username string }
			Verb        string
			ObjectRef   *struct{ Resource string }
			Annotations map[string]string
		}
		var bobs, admins []event
		Eventually(func(g Gomega) {
			f, err := os.Open(auditLog)
			g.Expect(err).NotTo(HaveOccurred())
			defer f.Close()
			bobs, admins = nil, nil
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				var e event
				g.Expect(json.Unmarshal(sc.Bytes(), &e)).To(Succeed())
				if e.Verb != "create" || e.ObjectRef == nil || e.ObjectRef.Resource != "configmaps" {
					continue
				}
				switch e.User.Username {
				case "bob":
					bobs = append(bobs, e)
				case "test-admin":
					admins = append(admins, e)
				}
			}
			g.Expect(bobs).NotTo(BeEmpty())
			g.Expect(admins).To(HaveLen(1))
		}).Should(Succeed())
		last := bobs[len(bobs)-1]
		Expect(last.Annotations).To(HaveKeyWithValue(policyName+"/creator", "bob"))
		Expect(last.Annotations).To(HaveKey("validation.policy.admission.k8s.io/validation_failure"))
		var failures []map[string]any
		Expect(json.Unmarshal([]byte(last.Annotations["validation.policy.admission.k8s.io/validation_failure"]), &failures)).To(Succeed())
		Expect(failures).To(ConsistOf(HaveKeyWithValue("binding", "secrets-readers")))
		Expect(admins[0].Annotations).To(HaveKeyWithValue(policyName+"/creator", "test-admin"))
		Expect(admins[0].Annotations).NotTo(HaveKey("validation.policy.admission.k8s.io/validation_failure"))
	})
})
