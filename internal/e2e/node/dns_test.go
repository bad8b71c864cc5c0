package node

import (
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Cluster DNS of the local node", func() {
	It("resolves Service and pod hostname records in pods, through their resolv.conf and the node's DNS server", func(ctx SpecContext) {
		Expect(os.Geteuid()).To(BeZero(), "the process runtime mounts pods' /etc/resolv.conf only in their own mount namespace: run as root")
		labels := map[string]string{"app": "dns-backend"}
		backend := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "dns-backend", Labels: labels},
			Spec: corev1.PodSpec{Hostname: "web-0", Subdomain: "dns-pets", Containers: []corev1.Container{podServer()}}}
		web := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "dns-web"},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: api.FromString("http")}}}}
		pets := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "dns-pets"},
			Spec: corev1.ServiceSpec{ClusterIP: "None", Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}
		for _, o := range []api.Object{web, pets, backend} {
			Expect(suite.c.Create(ctx, o)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { _ = suite.c.Delete(ctx, o) })
		}
		Eventually(func(g Gomega) { readyPods(ctx, g, labels, 1) }).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		urls := "http://dns-web/,http://dns-web.default.svc.cluster.local./,http://web-0.dns-pets:8080/"
		newClient := func() *corev1.Pod {
			return &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "dns-client"}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "get", Image: "local/podserver:1", Command: []string{suite.server, "-get", urls}}},
			}}
		}
		cl := newClient()
		// The headless Service's endpoint may lag the pod's readiness: retry.
		Eventually(func(g Gomega) {
			_ = suite.c.Delete(ctx, cl)
			g.Eventually(func() error { return suite.c.Get(ctx, client.ObjectKeyFromObject(cl), &corev1.Pod{}) }).
				WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
			c := newClient()
			g.Expect(suite.c.Create(ctx, c)).To(Succeed())
			var phase corev1.PodPhase
			g.Eventually(func() corev1.PodPhase {
				_ = suite.c.Get(ctx, client.ObjectKeyFromObject(c), c)
				phase = c.Status.Phase
				return phase
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(BeElementOf(corev1.PodSucceeded, corev1.PodFailed))
			out, err := kubectl(ctx, "logs", "dns-client").CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), string(out))
			g.Expect(phase).To(Equal(corev1.PodSucceeded), string(out))
			// The backend answers with its host name: spec.hostname, as the
			// kubelet names a pod's containers' host.
			g.Expect(string(out)).To(Equal("http://dns-web/: web-0\n" +
				"http://dns-web.default.svc.cluster.local./: web-0\n" +
				"http://web-0.dns-pets:8080/: web-0\n"))
		}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Succeed())
		DeferCleanup(func(ctx SpecContext) { _ = suite.c.Delete(ctx, cl) })
	}, SpecTimeout(3*time.Minute))
})
