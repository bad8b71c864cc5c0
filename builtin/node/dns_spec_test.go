package node_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/clusterdns"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// These specs run a second agent whose pods get the cluster DNS (ClusterDNS
// set) and the cluster DNS server on the kube-dns Service's address, as
// `converge up` does. The process runtime mounts the pod's resolv.conf only
// in the container's own mount namespace: they need root.
var _ = Describe("Cluster DNS for pods", Ordered, func() {
	const dnsNode = "node-dns"
	var dnsIP string
	var root string

	BeforeAll(func() {
		Expect(suite.rt.Namespaces()).To(BeTrue(),
			"the process runtime has no mount namespaces here (run as root): pods' /etc/resolv.conf cannot be mounted")
		ip, err := servicenet.ClusterDNSIP(suite.env.ServiceCIDR)
		Expect(err).NotTo(HaveOccurred())
		dnsIP = ip.String()

		srv, err := clusterdns.New(clusterdns.Options{Client: suite.c, Logger: GinkgoLogr, RetryInterval: 200 * time.Millisecond,
			Upstreams: []string{"127.0.0.1:9"}, ForwardTimeout: 200 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		root = filepath.Join(suite.env.Dir, dnsNode)
		agent, err := node.New(node.Options{
			NodeName: dnsNode, Config: &client.Config{Host: suite.env.URL}, Runtime: suite.rt, RootDir: root,
			PodCIDR: "127.78.0.0/16", ClusterDNS: []string{dnsIP}, NodeStatusUpdateInterval: time.Second,
			Logger: GinkgoLogr.WithName(dnsNode),
		})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		srvDone, agentDone := make(chan error, 1), make(chan error, 1)
		go func() { srvDone <- srv.Start(ctx) }()
		go func() { agentDone <- agent.Start(ctx) }()
		DeferCleanup(func() {
			cancel()
			Eventually(srvDone).Should(Receive(BeNil()))
			Eventually(agentDone, 30*time.Second).Should(Receive(BeNil()))
		})
		Eventually(srv.Addresses).Should(ContainElement("udp/" + dnsIP + ":53"))
	})

	// run runs a pod with one shell container on the DNS node until it
	// succeeds and returns its output.
	run := func(ctx SpecContext, name string, spec corev1.PodSpec, script string) string {
		spec.NodeName, spec.RestartPolicy = dnsNode, corev1.RestartPolicyNever
		spec.Containers = []corev1.Container{{Name: "main", Image: "local/sh:1", Command: []string{"/bin/sh", "-c", script}}}
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name}, Spec: spec}
		Expect(suite.c.Create(ctx, pod)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = suite.c.Delete(ctx, pod) })
		Eventually(func() (corev1.PodPhase, error) {
			err := suite.c.Get(ctx, client.ObjectKeyFromObject(pod), pod)
			return pod.Status.Phase, err
		}, 30*time.Second).Should(Equal(corev1.PodSucceeded), func() string { return logOf(root, pod) })
		return logOf(root, pod)
	}

	It("gives ClusterFirst pods the cluster DNS in /etc/resolv.conf, and it answers", func(ctx SpecContext) {
		// busybox's nslookup asks the nameserver of /etc/resolv.conf (no
		// search paths); getent goes through the C library's resolver, which
		// applies them.
		out := run(ctx, "dns-cluster-first", corev1.PodSpec{}, "cat /etc/resolv.conf && "+
			"/bin/busybox nslookup kubernetes.default.svc.cluster.local. && getent hosts kubernetes.default && getent hosts kubernetes && "+
			"/bin/busybox nslookup -type=srv _https._tcp.kubernetes.default.svc.cluster.local. "+dnsIP)
		Expect(out).To(ContainSubstring("search default.svc.cluster.local svc.cluster.local cluster.local"))
		Expect(out).To(ContainSubstring("nameserver " + dnsIP + "\n"))
		Expect(out).To(ContainSubstring("options ndots:5"))
		apiIP, err := servicenet.APIServerServiceIP(suite.env.ServiceCIDR)
		Expect(err).NotTo(HaveOccurred())
		ip := strings.ReplaceAll(apiIP.String(), ".", `\.`)
		Expect(out).To(MatchRegexp(`Name:\s+kubernetes\.default\.svc\.cluster\.local\nAddress:\s+`+ip+`\n`), "busybox nslookup")
		Expect(regexp.MustCompile(`(?m)^`+ip+`\s+kubernetes\.default\.svc\.cluster\.local$`).FindAllString(out, -1)).
			To(HaveLen(2), "the C library's resolver, through the search paths: kubernetes.default and kubernetes")
		Expect(out).To(ContainSubstring("service = 0 100 443 kubernetes.default.svc.cluster.local"))

		By("the host's /etc/resolv.conf is untouched")
		host, err := os.ReadFile("/etc/resolv.conf")
		Expect(err).NotTo(HaveOccurred())
		Expect(string(host)).NotTo(ContainSubstring("svc.cluster.local"))
	})

	It("gives dnsPolicy None pods only their dnsConfig", func(ctx SpecContext) {
		out := run(ctx, "dns-none", corev1.PodSpec{DNSPolicy: corev1.DNSNone, DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"192.0.2.1"}, Searches: []string{"example.test"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: api.Ptr("2")}},
		}}, "cat /etc/resolv.conf")
		Expect(out).To(Equal("search example.test\nnameserver 192.0.2.1\noptions ndots:2\n"))
	})
})

// logOf returns the stdout and stderr of a pod's container "main", first
// attempt, from the agent's log file under root (CRI lines, tags stripped).
func logOf(root string, pod *corev1.Pod) string {
	data, err := os.ReadFile(filepath.Join(root, "logs", pod.Namespace+"_"+pod.Name+"_"+pod.UID, "main", "0.log"))
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for line := range strings.Lines(string(data)) {
		if f := strings.SplitN(line, " ", 4); len(f) == 4 {
			b.WriteString(f[3])
		}
	}
	return b.String()
}
