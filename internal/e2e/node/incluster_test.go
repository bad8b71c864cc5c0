package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("An in-cluster client", func() {
	It("reaches the API server through the kubernetes Service with its ServiceAccount token", func(ctx SpecContext) {
		bin := filepath.Join(GinkgoT().TempDir(), "incluster")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./testdata/incluster")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "go build incluster: %s", out)

		// A secure control plane of its own, with a service range of its own:
		// its proxy serves its kubernetes Service.
		s := startSecure(ctx, "incluster-node")
		c := s.c
		Eventually(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = "incluster", "default"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Containers = []corev1.Container{{Name: "main", Image: "local/incluster:1", Command: []string{bin}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		var phase corev1.PodPhase
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), p)).To(Succeed())
			phase = p.Status.Phase
			g.Expect(phase).To(BeElementOf(corev1.PodSucceeded, corev1.PodFailed), "%+v", p.Status)
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
		logs, err := kubectlWith(ctx, s.kubeconfig, "logs", "incluster").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(logs))
		Expect(phase).To(Equal(corev1.PodSucceeded), string(logs))

		ip, err := servicenet.APIServerServiceIP(s.serviceCIDR)
		Expect(err).NotTo(HaveOccurred())
		lines := strings.Split(strings.TrimSpace(string(logs)), "\n")
		Expect(lines).To(HaveLen(3), string(logs))
		Expect(lines[0]).To(Equal("host=https://" + ip.String() + ":443 namespace=default"))
		Expect(lines[1]).To(HavePrefix("version=v1."))
		Expect(lines[2]).To(Equal("allowed=true"))
	}, SpecTimeout(3*time.Minute))
})
