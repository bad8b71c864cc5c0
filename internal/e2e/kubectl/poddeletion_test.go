package kubectl

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// agentlessNode is a Node no agent runs: its pods stay Terminating until a
// zero-grace DELETE, which the spec sends itself in the agent's place.
const agentlessNode = `apiVersion: v1
kind: Node
metadata:
  name: e2e-agentless
`

const boundPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  nodeName: e2e-agentless
  terminationGracePeriodSeconds: 120
  containers:
  - name: main
    image: example/app:1
`

var _ = Describe("kubectl and graceful pod deletion", func() {
	var (
		k  *kubectl
		ns string
	)
	BeforeEach(func(ctx SpecContext) {
		k = suite.dispatcher
		ns = newNamespace(ctx, k)
		r := k.runEnv(ctx, nil, agentlessNode, "apply", "-f", "-")
		Expect(r.code).To(BeZero(), "%s", r)
	})

	It("shows a deleted pod Terminating and returns from delete once the pod is gone", func(ctx SpecContext) {
		r := k.runEnv(ctx, nil, fmtPod("slow"), "-n", ns, "apply", "-f", "-")
		Expect(r.code).To(BeZero(), "%s", r)
		del := k.start(ctx, "-n", ns, "delete", "pod", "slow", "--timeout=60s")
		Eventually(func() string { return k.ok(ctx, "-n", ns, "get", "pods") }).WithContext(ctx).
			Should(MatchRegexp(`(?m)^slow\s+\S+\s+Terminating\s+`))
		pod := k.json(ctx, "-n", ns, "get", "pod", "slow")
		Expect(nested(pod, "metadata", "deletionGracePeriodSeconds")).To(BeEquivalentTo(120))
		Consistently(del.exited).WithContext(ctx).WithTimeout(time.Second).Should(BeFalse(), "delete returned while the pod terminates: %s", del)

		By("the node agent's zero-grace DELETE ends the wait")
		k.ok(ctx, "-n", ns, "delete", "pod", "slow", "--grace-period=0", "--force")
		Eventually(del.exited).WithContext(ctx).WithTimeout(15*time.Second).Should(BeTrue(), "%s", del)
		Expect(del.exitCode()).To(BeZero(), "%s", del)
		Expect(del.stdout.String()).To(ContainSubstring(`pod "slow" deleted`))
	})

	It("deletes at once with --grace-period=0 --force", func(ctx SpecContext) {
		r := k.runEnv(ctx, nil, fmtPod("forced"), "-n", ns, "apply", "-f", "-")
		Expect(r.code).To(BeZero(), "%s", r)
		start := time.Now()
		k.ok(ctx, "-n", ns, "delete", "pod", "forced", "--grace-period=0", "--force", "--timeout=30s")
		Expect(time.Since(start)).To(BeNumerically("<", 20*time.Second))
		r = k.fails(ctx, "-n", ns, "get", "pod", "forced")
		Expect(r.stderr).To(ContainSubstring("NotFound"), "%s", r)
	})
})

func fmtPod(name string) string { return fmt.Sprintf(boundPod, name) }
