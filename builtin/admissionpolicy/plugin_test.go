package admissionpolicy_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// namespace creates a namespace labelled for the spec's bindings.
func namespace(ctx SpecContext, name string) {
	apply(ctx, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {vap-test: %s}\n", name, name))
}

// policy is a policy on configmaps of namespaces labelled vap-test=ns.
func policy(name, ns, extra string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %s}
spec:
  matchConstraints:
    namespaceSelector: {matchLabels: {vap-test: %s}}
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
%s`, name, ns, extra)
}

func binding(name, policyName, actions, extra string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %s}
spec:
  policyName: %s
  validationActions: [%s]
%s`, name, policyName, actions, extra)
}

// createConfigMap runs kubectl create configmap with one key.
func createConfigMap(ctx SpecContext, ns, name, kv string) (string, string, error) {
	return run(ctx, "", "create", "configmap", name, "-n", ns, "--from-literal="+kv)
}

var _ = Describe("ValidatingAdmissionPolicy", func() {
	It("denies with Kubernetes' wording and 422, and lets valid objects through", func(ctx SpecContext) {
		namespace(ctx, "deny")
		apply(ctx, policy("size.example.com", "deny", `  variables:
  - {name: size, expression: "size(object.data.mode)"}
  validations:
  - expression: "variables.size <= 4"
    messageExpression: "'mode is ' + string(variables.size) + ' characters long'"
  - expression: "object.metadata.name != 'forbidden'"
    message: "this name is taken"
    reason: Forbidden
`))
		apply(ctx, binding("size-binding", "size.example.com", "Deny", ""))
		Eventually(func(g Gomega) {
			_, errOut, err := createConfigMap(ctx, "deny", "long", "mode=verbose")
			g.Expect(exitErr(err)).To(BeTrue(), "created despite the policy")
			g.Expect(errOut).To(ContainSubstring(`configmaps "long" is forbidden: ValidatingAdmissionPolicy 'size.example.com' with binding 'size-binding' denied request: mode is 7 characters long`))
		}).Should(Succeed())
		out, errOut, err := run(ctx, "", "create", "configmap", "long", "-n", "deny", "--from-literal=mode=verbose", "-o", "name", "--v=6")
		Expect(err).To(HaveOccurred())
		Expect(out + errOut).To(ContainSubstring("422 Unprocessable Entity"))
		_, errOut, err = createConfigMap(ctx, "deny", "short", "mode=on")
		Expect(err).NotTo(HaveOccurred(), errOut)
		_, errOut, err = createConfigMap(ctx, "deny", "forbidden", "mode=on")
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("denied request: this name is taken"))
		out, errOut, _ = run(ctx, "", "create", "configmap", "forbidden", "-n", "deny", "--from-literal=mode=on", "--v=6")
		Expect(out + errOut).To(ContainSubstring("403 Forbidden"))
		By("other namespaces are not selected")
		namespace(ctx, "elsewhere")
		_, errOut, err = createConfigMap(ctx, "elsewhere", "long", "mode=verbose")
		Expect(err).NotTo(HaveOccurred(), errOut)
	})

	It("warns with Warn and admits", func(ctx SpecContext) {
		namespace(ctx, "warn")
		apply(ctx, policy("warn.example.com", "warn", `  validations:
  - expression: "!('debug' in object.data)"
    message: "debug is set"
`))
		apply(ctx, binding("warn-binding", "warn.example.com", "Warn", ""))
		n := 0
		Eventually(func(g Gomega) {
			n++
			_, errOut, err := createConfigMap(ctx, "warn", fmt.Sprintf("c%d", n), "debug=1")
			g.Expect(err).NotTo(HaveOccurred(), errOut)
			g.Expect(errOut).To(ContainSubstring("Warning: Validation failed for ValidatingAdmissionPolicy 'warn.example.com' with binding 'warn-binding': debug is set"))
		}).Should(Succeed())
	})

	It("evaluates each parameter object and follows parameterNotFoundAction", func(ctx SpecContext) {
		namespace(ctx, "params")
		apply(ctx, policy("limit.example.com", "params", `  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConditions:
  - {name: not-skipped, expression: "object.metadata.name != 'skip'"}
  validations:
  - expression: "size(object.data) <= int(params.data.max)"
    messageExpression: "'at most ' + params.data.max + ' keys'"
`))
		apply(ctx, binding("limit-binding", "limit.example.com", "Deny", `  paramRef:
    namespace: params-src
    selector: {matchLabels: {limit: "true"}}
    parameterNotFoundAction: Deny
`))
		Eventually(func(g Gomega) {
			_, errOut, err := createConfigMap(ctx, "params", "one", "a=1")
			g.Expect(err).To(HaveOccurred())
			g.Expect(errOut).To(ContainSubstring("no params found for policy binding with `Deny` parameterNotFoundAction"))
		}).Should(Succeed())
		namespace(ctx, "params-src")
		apply(ctx, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limit-a, namespace: params-src, labels: {limit: \"true\"}}\ndata: {max: \"2\"}\n")
		apply(ctx, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limit-b, namespace: params-src, labels: {limit: \"true\"}}\ndata: {max: \"1\"}\n")
		Eventually(func(g Gomega) {
			_, errOut, err := createConfigMap(ctx, "params", "one", "a=1")
			g.Expect(err).NotTo(HaveOccurred(), errOut)
		}).Should(Succeed())
		out, errOut, err := run(ctx, "", "create", "configmap", "two", "-n", "params", "--from-literal=a=1", "--from-literal=b=2")
		Expect(err).To(HaveOccurred(), out)
		Expect(errOut).To(ContainSubstring("denied request: at most 1 keys"))
		By("a false matchCondition skips the policy")
		_, errOut, err = run(ctx, "", "create", "configmap", "skip", "-n", "params", "--from-literal=a=1", "--from-literal=b=2")
		Expect(err).NotTo(HaveOccurred(), errOut)
	})

	It("writes type-checking warnings to the policy's status", func(ctx SpecContext) {
		apply(ctx, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: typed.example.com}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas > '1'"
    messageExpression: "'got ' + object.spec.replicas"
  - expression: "object.spec.replicas > 1"
`)
		Eventually(func(g Gomega) {
			out, errOut, err := run(ctx, "", "get", "validatingadmissionpolicy", "typed.example.com",
				"-o", `jsonpath={.metadata.generation}/{.status.observedGeneration}{range .status.typeChecking.expressionWarnings[*]}~~{.fieldRef}: {.warning}{end}`)
			g.Expect(err).NotTo(HaveOccurred(), errOut)
			parts := strings.Split(out, "~~")
			g.Expect(parts).To(HaveLen(3), out)
			g.Expect(parts[0]).To(Equal("1/1"))
			g.Expect(parts[1]).To(HavePrefix("spec.validations[0].expression: "))
			g.Expect(parts[1]).To(ContainSubstring("found no matching overload for '_>_' applied to '(int, string)'"))
			g.Expect(parts[2]).To(HavePrefix("spec.validations[0].messageExpression: "))
			g.Expect(parts[2]).To(ContainSubstring("found no matching overload for '_+_' applied to '(string, int)'"))
		}).Should(Succeed())
	})

	It("answers malformed policies and bindings with 422 and the failing fields", func(ctx SpecContext) {
		for _, tt := range []struct{ manifest, want string }{
			{`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: empty.example.com}
spec: {failurePolicy: Sometimes}
`, `spec.matchConstraints: Required value`},
			{policy("badcel.example.com", "none", `  validations:
  - expression: "object.spec.("
`), `spec.validations[0].expression: Invalid value: "object.spec.(": compilation failed`},
			{policy("notbool.example.com", "none", `  validations:
  - expression: "'yes'"
`), `spec.validations[0].expression: Invalid value: "'yes'": must evaluate to bool`},
			{binding("bad-binding", "", "Deny, Warn, Block", "  paramRef: {name: x, selector: {}}\n"),
				`spec.policyName: Required value`},
		} {
			out, errOut, err := run(ctx, tt.manifest, "create", "-f", "-")
			Expect(exitErr(err)).To(BeTrue(), "created: %s", out)
			Expect(errOut).To(ContainSubstring("is invalid"))
			Expect(errOut).To(ContainSubstring(tt.want))
		}
		_, errOut, _ := run(ctx, binding("bad-binding", "", "Deny, Warn, Block", "  paramRef: {name: x, selector: {}}\n"), "create", "-f", "-")
		for _, f := range []string{"spec.paramRef.name: Forbidden", "spec.paramRef.parameterNotFoundAction: Required value",
			`spec.validationActions[2]: Unsupported value: "Block"`, "spec.validationActions: Invalid value"} {
			Expect(errOut).To(ContainSubstring(f))
		}
		_, errOut, _ = run(ctx, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: empty.example.com}
spec: {failurePolicy: Sometimes}
`, "create", "-f", "-")
		Expect(errOut).To(ContainSubstring(`spec.failurePolicy: Unsupported value: "Sometimes"`))
		Expect(errOut).To(ContainSubstring("spec.validations: Required value"))
	})
})

var _ = Describe("ValidatingAdmissionPolicy API", func() {
	It("is discoverable like other built-ins, with a status subresource", func(ctx SpecContext) {
		out, errOut, err := run(ctx, "", "api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(ContainSubstring("validatingadmissionpolicies.admissionregistration.k8s.io"))
		Expect(out).To(ContainSubstring("validatingadmissionpolicybindings.admissionregistration.k8s.io"))
		out, errOut, err = run(ctx, "", "get", "--raw", "/apis/admissionregistration.k8s.io/v1")
		Expect(err).NotTo(HaveOccurred(), errOut)
		Expect(out).To(ContainSubstring(`"name":"validatingadmissionpolicies/status"`))
	})
})
