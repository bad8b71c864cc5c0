package deployment_test

import (
	"context"
	"os"
	"os/exec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/controllers/deployment"
)

const kubectlPath = "/usr/bin/kubectl"

func kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, kubectlPath, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "HOME="+GinkgoT().TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var _ = Describe("kubectl rollout", func() {
	It("status, history and undo work against the controller", func(ctx SpecContext) {
		if _, err := os.Stat(kubectlPath); err != nil {
			Skip("kubectl not installed")
		}
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "k", 2, "nginx:1")
		d.Annotations = map[string]string{deployment.ChangeCauseAnnotation: "create nginx:1"}
		Expect(c.Create(ctx, d)).To(Succeed())

		out, err := kubectl(ctx, "-n", ns, "rollout", "status", "deployment/k", "--timeout=20s")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("successfully rolled out"))

		patch(ctx, d, `{"metadata":{"annotations":{"kubernetes.io/change-cause":"update nginx:2"}},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`)
		out, err = kubectl(ctx, "-n", ns, "rollout", "status", "deployment/k", "--timeout=20s")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("successfully rolled out"))

		out, err = kubectl(ctx, "-n", ns, "rollout", "history", "deployment/k")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`1\s+create nginx:1`))
		Expect(out).To(MatchRegexp(`2\s+update nginx:2`))

		out, err = kubectl(ctx, "-n", ns, "rollout", "undo", "deployment/k")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("rolled back"))
		out, err = kubectl(ctx, "-n", ns, "rollout", "status", "deployment/k", "--timeout=20s")
		Expect(err).NotTo(HaveOccurred(), out)

		Eventually(func(g Gomega) {
			revs := rsByRevision(ctx, ns)
			g.Expect(revs).To(HaveKey("3"))
			g.Expect(revs["3"].Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1"))
			g.Expect(*revs["3"].Spec.Replicas).To(Equal(int32(2)))
		}).Should(Succeed())
		out, err = kubectl(ctx, "-n", ns, "rollout", "history", "deployment/k")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(MatchRegexp(`3\s+create nginx:1`))
		Expect(out).NotTo(MatchRegexp(`(?m)^1\s`))

		out, err = kubectl(ctx, "-n", ns, "describe", "deployment/k")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("ScalingReplicaSet"))
	})
})
