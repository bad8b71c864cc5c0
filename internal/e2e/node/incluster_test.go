package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controlplane"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

var _ = Describe("An in-cluster client", func() {
	It("reaches the API server through the kubernetes Service with its ServiceAccount token", func(ctx SpecContext) {
		bin := filepath.Join(GinkgoT().TempDir(), "incluster")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./testdata/incluster")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "go build incluster: %s", out)

		// A secure control plane of its own (tokens are issued only then), with
		// a service range of its own: its proxy serves its kubernetes Service.
		cidr := testenv.ServiceCIDR()
		cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: GinkgoT().TempDir(), NoFsync: true, CompactionInterval: -1,
			Secure: true, LocalNode: true, NodeName: "incluster-node", ServiceCIDR: cidr,
			Controllers: []string{"serviceaccount"}, Scheduler: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(cp.Close()).To(Succeed()) })
		cfg, err := cp.ClientConfig("test-admin")
		Expect(err).NotTo(HaveOccurred())
		sch, err := all.NewScheme()
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(cfg, client.Options{Scheme: sch})
		Expect(err).NotTo(HaveOccurred())
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
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
		logs, err := kubectlWith(ctx, kubeconfig, "logs", "incluster").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(logs))
		Expect(phase).To(Equal(corev1.PodSucceeded), string(logs))

		ip, err := servicenet.APIServerServiceIP(cidr)
		Expect(err).NotTo(HaveOccurred())
		lines := strings.Split(strings.TrimSpace(string(logs)), "\n")
		Expect(lines).To(HaveLen(3), string(logs))
		Expect(lines[0]).To(Equal("host=https://" + ip.String() + ":443 namespace=default"))
		Expect(lines[1]).To(HavePrefix("version=v1."))
		Expect(lines[2]).To(Equal("allowed=true"))
	}, SpecTimeout(3*time.Minute))
})
