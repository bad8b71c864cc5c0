package kubectl

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("kubectl 1.32 (dispatcher) server-side apply", func() {
	serverSideSpecs(func() *kubectl { return suite.dispatcher })
})

var _ = Describe("kubectl 1.27 server-side apply", func() {
	serverSideSpecs(func() *kubectl { return suite.v127 })
})

var _ = Describe("kubectl 1.33 server-side apply", func() {
	serverSideSpecs(func() *kubectl { return suite.v133 })
})

// ssaManifest is a Deployment with replicas REPLICAS.
const ssaManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ssa
spec:
  replicas: REPLICAS
  selector:
    matchLabels: {app: ssa}
  template:
    metadata:
      labels: {app: ssa}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
`

func ssaDeployment(replicas string) string {
	return strings.Replace(ssaManifest, "REPLICAS", replicas, 1)
}

func serverSideSpecs(kc func() *kubectl) {
	var (
		k  *kubectl
		ns string
	)
	BeforeEach(func(ctx SpecContext) {
		k = kc()
		ns = newNamespace(ctx, k)
	})
	applyStdin := func(ctx SpecContext, manifest string, args ...string) result {
		GinkgoHelper()
		return k.runEnv(ctx, nil, manifest, append([]string{"-n", ns, "apply", "-f", "-"}, args...)...)
	}
	replicas := func(ctx SpecContext) any {
		GinkgoHelper()
		return nested(k.json(ctx, "-n", ns, "get", "deployment", "ssa"), "spec", "replicas")
	}

	It("applies server-side, shows managedFields, reports conflicts and forces them", func(ctx SpecContext) {
		r := applyStdin(ctx, ssaDeployment("2"), "--server-side")
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(r.stdout).To(ContainSubstring("deployment.apps/ssa serverside-applied"))

		out := k.ok(ctx, "-n", ns, "get", "deployment", "ssa", "-o", "yaml", "--show-managed-fields")
		Expect(out).To(ContainSubstring("managedFields:"))
		Expect(out).To(ContainSubstring("manager: kubectl\n"))
		Expect(out).To(ContainSubstring("operation: Apply"))
		Expect(out).To(ContainSubstring("fieldsType: FieldsV1"))
		Expect(out).To(ContainSubstring(`k:{"containerPort":80,"protocol":"TCP"}:`))
		Expect(k.ok(ctx, "-n", ns, "get", "deployment", "ssa", "-o", "yaml")).NotTo(ContainSubstring("managedFields"),
			"kubectl hides managedFields unless asked")

		By("the same manifest again is unchanged")
		r = applyStdin(ctx, ssaDeployment("2"), "--server-side")
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(r.stdout).To(ContainSubstring("deployment.apps/ssa serverside-applied"))

		By("another field manager changing replicas conflicts")
		r = applyStdin(ctx, ssaDeployment("3"), "--server-side", "--field-manager=other")
		Expect(r.code).NotTo(BeZero(), "%s", r)
		Expect(r.stderr).To(ContainSubstring(`Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`))
		Expect(r.stderr).To(ContainSubstring("--force-conflicts"))
		Expect(replicas(ctx)).To(BeEquivalentTo(2))

		By("--force-conflicts takes replicas over")
		r = applyStdin(ctx, ssaDeployment("3"), "--server-side", "--field-manager=other", "--force-conflicts")
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(replicas(ctx)).To(BeEquivalentTo(3))
		out = k.ok(ctx, "-n", ns, "get", "deployment", "ssa", "-o", "yaml", "--show-managed-fields")
		Expect(out).To(ContainSubstring("manager: other"))

		By("--dry-run=server changes nothing")
		r = applyStdin(ctx, ssaDeployment("7"), "--server-side", "--field-manager=other", "--dry-run=server")
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(r.stdout).To(ContainSubstring("(server dry run)"))
		Expect(replicas(ctx)).To(BeEquivalentTo(3))
	})

	It("upgrades an object written by client-side apply", func(ctx SpecContext) {
		r := applyStdin(ctx, ssaDeployment("1"))
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(k.ok(ctx, "-n", ns, "get", "deployment", "ssa", "-o", "yaml", "--show-managed-fields")).To(
			ContainSubstring("manager: kubectl-client-side-apply"))

		r = applyStdin(ctx, ssaDeployment("4"), "--server-side")
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(replicas(ctx)).To(BeEquivalentTo(4))
		out := k.ok(ctx, "-n", ns, "get", "deployment", "ssa", "-o", "yaml", "--show-managed-fields")
		Expect(out).To(ContainSubstring("operation: Apply"))

		By("client-side apply still works afterwards")
		r = applyStdin(ctx, ssaDeployment("5"))
		Expect(r.code).To(BeZero(), "%s", r)
		Expect(replicas(ctx)).To(BeEquivalentTo(5))
	})

	It("diffs against a server-side dry run", func(ctx SpecContext) {
		Expect(applyStdin(ctx, ssaDeployment("2"), "--server-side").code).To(BeZero())
		r := k.runEnv(ctx, nil, ssaDeployment("6"), "-n", ns, "diff", "--server-side", "-f", "-")
		Expect(r.code).To(Equal(1), "diff exits 1 when something differs: %s", r)
		Expect(r.stdout).To(MatchRegexp(`\+\s+replicas: 6`))
		Expect(replicas(ctx)).To(BeEquivalentTo(2))
	})
}
