package podnet_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/vishvananda/netlink"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/node/podnet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Pods on containerd with CNI", Ordered, func() {
	var web, other *corev1.Pod
	var port int32

	BeforeAll(func(ctx SpecContext) {
		port = hostPort()
		p := &corev1.Pod{}
		p.Name = "web"
		p.Spec.Containers = []corev1.Container{sh("web", webScript), sh("side", "exec /bin/busybox sleep 3600")}
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: port, Protocol: corev1.ProtocolTCP}}
		// "side" reads the pod IP from the downward API: its spec waits for
		// the network; "web" is prepared while the network is set up.
		p.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "MY_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
		createOn(ctx, suite.a, p)
		o := &corev1.Pod{}
		o.Name = "other"
		o.Spec.Containers = []corev1.Container{sh("c", "exec /bin/busybox sleep 3600")}
		createOn(ctx, suite.b, o)
		web, other = running(ctx, "web"), running(ctx, "other")
	})

	It("gives each pod an IP from its node's pod CIDR, reachable from the host", func() {
		Expect(web.Status.PodIP).To(Satisfy(inCIDR(suite.a.cidr)), "web on %s", suite.a.cidr)
		Expect(web.Status.PodIPs).To(ConsistOf(corev1.PodIP{IP: web.Status.PodIP}))
		Expect(other.Status.PodIP).To(Satisfy(inCIDR(suite.b.cidr)), "other on %s", suite.b.cidr)
		Eventually(httpGet("http://" + web.Status.PodIP + ":8080/")).Should(Equal("hello from web\n"))
	})

	It("lets the containers of a pod talk over localhost, with the pod's hostname and hosts file", func(ctx SpecContext) {
		Eventually(wget(ctx, web, "side", "http://127.0.0.1:8080/")).Should(Equal("hello from web\n"))
		Expect(execIn(ctx, web, "side", "/bin/busybox", "hostname")).To(Equal("web\n"))
		Expect(execIn(ctx, web, "side", "/bin/busybox", "cat", "/etc/hosts")).To(ContainSubstring(web.Status.PodIP + "\tweb\n"))
		Expect(execIn(ctx, web, "side", "/bin/busybox", "ip", "-4", "-o", "addr", "show", "eth0")).To(ContainSubstring(web.Status.PodIP + "/"))
		Expect(execIn(ctx, web, "web", "/bin/busybox", "cat", "/etc/hosts")).To(ContainSubstring(web.Status.PodIP + "\tweb\n"))
	})

	It("gives the containers the pod IP in their environment, whether prepared during the network's setup or after it", func(ctx SpecContext) {
		Expect(execIn(ctx, web, "web", "/bin/busybox", "env")).To(ContainSubstring("POD_IP=" + web.Status.PodIP + "\n"))
		env, err := execIn(ctx, web, "side", "/bin/busybox", "env")
		Expect(err).NotTo(HaveOccurred())
		Expect(env).To(And(ContainSubstring("POD_IP="+web.Status.PodIP+"\n"), ContainSubstring("MY_IP="+web.Status.PodIP+"\n")))
	})

	It("lets a pod reach a pod of another node by IP", func(ctx SpecContext) {
		Eventually(wget(ctx, other, "c", "http://"+web.Status.PodIP+":8080/")).Should(Equal("hello from web\n"))
	})

	It("lets a pod reach a Service's cluster IP and the host its node port", func(ctx SpecContext) {
		svc := &corev1.Service{}
		svc.Namespace, svc.Name = "default", "web"
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}
		Expect(suite.c.Create(ctx, svc)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(suite.c.Delete(ctx, svc)).To(Succeed()) })
		es := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4}
		es.Namespace, es.Name = "default", "web-1"
		es.Labels = map[string]string{discoveryv1.LabelServiceName: "web"}
		es.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{web.Status.PodIP}, Conditions: discoveryv1.EndpointConditions{Ready: api.Ptr(true)}}}
		es.Ports = []discoveryv1.EndpointPort{{Name: api.Ptr("http"), Port: api.Ptr(int32(8080)), Protocol: api.Ptr(corev1.ProtocolTCP)}}
		Expect(suite.c.Create(ctx, es)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(suite.c.Delete(ctx, es)).To(Succeed()) })
		Expect(svc.Spec.ClusterIP).To(HavePrefix("10.43."))

		Eventually(wget(ctx, other, "c", "http://"+svc.Spec.ClusterIP+"/")).Should(Equal("hello from web\n"))
		Eventually(httpGet("http://127.0.0.1:" + strconv.Itoa(int(svc.Spec.Ports[0].NodePort)) + "/")).Should(Equal("hello from web\n"))
		Expect(addrsOf(suite.proxyIface)).To(ContainElement(svc.Spec.ClusterIP + "/32"))

		By("leaving alone an address another proxy put on the shared interface")
		foreign := fmt.Sprintf("10.199.%d.7/32", GinkgoRandomSeed()%250)
		Expect(runIP("addr", "add", foreign, "dev", suite.proxyIface)).Error().NotTo(HaveOccurred())
		DeferCleanup(func() { _, _ = runIP("addr", "del", foreign, "dev", suite.proxyIface) })
		svc2 := &corev1.Service{}
		svc2.Namespace, svc2.Name = "default", "web-2"
		svc2.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}
		Expect(suite.c.Create(ctx, svc2)).To(Succeed())
		Eventually(func() []string { return addrsOf(suite.proxyIface) }).Should(ContainElement(svc2.Spec.ClusterIP + "/32"))
		Expect(suite.c.Delete(ctx, svc2)).To(Succeed())
		Eventually(func() []string { return addrsOf(suite.proxyIface) }).ShouldNot(ContainElement(svc2.Spec.ClusterIP + "/32"))
		Expect(addrsOf(suite.proxyIface)).To(ContainElement(foreign))

		By("putting back its own address when something else removed it")
		Expect(runIP("addr", "del", svc.Spec.ClusterIP+"/32", "dev", suite.proxyIface)).Error().NotTo(HaveOccurred())
		Eventually(func() []string { return addrsOf(suite.proxyIface) }).Should(ContainElement(svc.Spec.ClusterIP + "/32"))

		By("reaching the node port on the node's address from the host, from a pod, and from the Service's own pod (hairpin)")
		nodePort := "http://" + net.JoinHostPort(suite.nodeIP, strconv.Itoa(int(svc.Spec.Ports[0].NodePort))) + "/"
		Eventually(httpGet(nodePort)).Should(Equal("hello from web\n"))
		Eventually(wget(ctx, other, "c", nodePort)).Should(Equal("hello from web\n"))
		Eventually(wget(ctx, web, "side", nodePort)).Should(Equal("hello from web\n"))
		Eventually(wget(ctx, web, "side", "http://"+svc.Spec.ClusterIP+"/")).Should(Equal("hello from web\n"))
	})

	It("keeps hostNetwork pods in the host's network with the node's IP", func(ctx SpecContext) {
		h := &corev1.Pod{}
		h.Name = "host-net"
		h.Spec.HostNetwork = true
		h.Spec.Containers = []corev1.Container{sh("c", "exec /bin/busybox sleep 3600")}
		createOn(ctx, suite.a, h)
		h = running(ctx, "host-net")
		Expect(h.Status.PodIP).To(Equal(suite.nodeIP), "the node's InternalIP")
		Expect(execIn(ctx, h, "c", "/bin/busybox", "ip", "-o", "link")).To(ContainSubstring(podnet.BridgeName(suite.a.name)))
		Expect(filepath.Join(suite.a.root, "netns", h.UID)).NotTo(BeAnExistingFile())
		Expect(suite.c.Delete(ctx, h, client.GracePeriodSeconds(0))).To(Succeed())
	})

	It("advertises the address of the host's default-route interface as the node's InternalIP", func(ctx SpecContext) {
		Expect(suite.nodeIP).NotTo(Equal("127.0.0.1"))
		Eventually(func(g Gomega) {
			n := &corev1.Node{}
			g.Expect(suite.c.Get(ctx, client.ObjectKey{Name: suite.a.name}, n)).To(Succeed())
			g.Expect(n.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: suite.nodeIP}))
		}).Should(Succeed())
		Expect(web.Status.HostIP).To(Equal(suite.nodeIP))
	})

	It("forwards a hostPort on the node's address from the host, from pods and from the pod itself", func(ctx SpecContext) {
		url := "http://" + net.JoinHostPort(suite.nodeIP, strconv.Itoa(int(port))) + "/"
		Eventually(httpGet(url)).Should(Equal("hello from web\n"))
		Eventually(httpGet("http://" + hostAddr() + ":" + strconv.Itoa(int(port)) + "/")).Should(Equal("hello from web\n"))
		Eventually(wget(ctx, other, "c", url)).Should(Equal("hello from web\n"))
		Eventually(wget(ctx, web, "side", url)).Should(Equal("hello from web\n"))
	})

	It("maps one hostPort to different pods by hostIP: 127.0.0.1 and the node's address", func(ctx SpecContext) {
		hp := hostPort()
		var pods []*corev1.Pod
		DeferCleanup(func(ctx SpecContext) {
			for _, p := range pods {
				Expect(suite.c.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
			}
			Eventually(func() []string { return vethsOn(podnet.BridgeName(suite.a.name)) }).Should(HaveLen(1), "only web's")
		})
		for name, ip := range map[string]string{"on-lo": "127.0.0.1", "on-node": suite.nodeIP} {
			p := &corev1.Pod{}
			p.Name = name
			p.Spec.Containers = []corev1.Container{sh("web", webScript)}
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: hp, HostIP: ip, Protocol: corev1.ProtocolTCP}}
			createOn(ctx, suite.a, p)
			pods = append(pods, p)
		}
		for _, p := range pods {
			running(ctx, p.Name)
		}
		onNode := "http://" + net.JoinHostPort(suite.nodeIP, strconv.Itoa(int(hp))) + "/"
		Eventually(httpGet(onNode)).Should(Equal("hello from on-node\n"))
		Eventually(wget(ctx, other, "c", onNode)).Should(Equal("hello from on-node\n"))
		// From the node's address to 127.0.0.1, as the HostPort conformance
		// spec does (curl --interface): a loopback source cannot leave lo.
		fromNode := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{
			LocalAddr: &net.TCPAddr{IP: net.ParseIP(suite.nodeIP)}}).DialContext}}
		Eventually(func() (string, error) {
			resp, err := fromNode.Get("http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(int(hp))) + "/")
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		}).Should(Equal("hello from on-lo\n"))
	})

	It("reports a missing CNI plugin on the pod and keeps running", func(ctx SpecContext) {
		p := &corev1.Pod{}
		p.Name = "no-cni"
		p.Spec.Containers = []corev1.Container{sh("c", "exec /bin/busybox sleep 3600")}
		createOn(ctx, suite.bad, p)
		Eventually(func(g Gomega) {
			got, err := getPod(ctx, "no-cni")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Status.Message).To(And(ContainSubstring(`"bridge"`), ContainSubstring("containernetworking-plugins")))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			evs := &corev1.EventList{}
			g.Expect(suite.c.List(ctx, evs, client.InNamespace("default"))).To(Succeed())
			var reasons []string
			for _, e := range evs.Items {
				if e.InvolvedObject.Name == "no-cni" {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement("FailedCreatePodSandBox"))
		}).Should(Succeed())
		Consistently(suite.bad.done, "300ms").ShouldNot(Receive())
		Expect(filepath.Join(suite.bad.root, "netns", p.UID)).NotTo(BeAnExistingFile())
	})

	It("keeps a pod's IP across an agent restart and tears down the network of a pod deleted meanwhile", func(ctx SpecContext) {
		g := &corev1.Pod{}
		g.Name = "gone"
		g.Spec.Containers = []corev1.Container{sh("c", "exec /bin/busybox sleep 3600")}
		createOn(ctx, suite.b, g)
		g = running(ctx, "gone")
		goneNS := filepath.Join(suite.b.root, "netns", g.UID)
		Expect(goneNS).To(BeAnExistingFile())

		suite.b.cancel()
		Eventually(suite.b.done, 30*time.Second).Should(Receive(BeNil()))
		Expect(suite.c.Delete(ctx, g, client.GracePeriodSeconds(0))).To(Succeed())
		suite.b = startAgent(suite.b.name, suite.b.cidr, nil)

		Eventually(func(g Gomega) {
			p, err := getPod(ctx, "other")()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(p.Status.ContainerStatuses[0].ContainerID).NotTo(Equal(other.Status.ContainerStatuses[0].ContainerID), "restarted by the new agent")
			g.Expect(p.Status.ContainerStatuses[0].State.Running).NotTo(BeNil())
			g.Expect(p.Status.PodIP).To(Equal(other.Status.PodIP))
			other = p
		}).Should(Succeed())
		Eventually(wget(ctx, other, "c", "http://"+web.Status.PodIP+":8080/")).Should(Equal("hello from web\n"))
		Eventually(func() string { return goneNS }).ShouldNot(BeAnExistingFile())
		Expect(vethsOn(podnet.BridgeName(suite.b.name))).To(HaveLen(1))
	})

	It("leaves no namespace, veth or IP allocation behind when a pod goes", func(ctx SpecContext) {
		ns := filepath.Join(suite.a.root, "netns", web.UID)
		Expect(ns).To(BeAnExistingFile())
		Expect(vethsOn(podnet.BridgeName(suite.a.name))).To(HaveLen(1))
		alloc := filepath.Join(suite.a.root, "cni", "ipam", podnet.NetworkName(suite.a.name), web.Status.PodIP)
		Expect(alloc).To(BeAnExistingFile())

		Expect(suite.c.Delete(ctx, web, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() error {
			_, err := getPod(ctx, "web")()
			return client.IgnoreNotFound(err)
		}).Should(Succeed())
		Eventually(func() bool { _, err := getPod(ctx, "web")(); return err != nil }).Should(BeTrue())
		Eventually(func() string { return ns }).ShouldNot(BeAnExistingFile())
		Expect(alloc).NotTo(BeAnExistingFile())
		Expect(filepath.Join(suite.a.root, "podnet", web.UID+".json")).NotTo(BeAnExistingFile())
		Expect(vethsOn(podnet.BridgeName(suite.a.name))).To(BeEmpty())
		Expect(iptablesSave()).NotTo(ContainSubstring(strconv.Itoa(int(port))), "hostPort rules removed")
	})
})

var _ = Describe("Network", func() {
	It("sets a pod up idempotently and tears it down twice", func(ctx SpecContext) {
		root := GinkgoT().TempDir()
		name := fmt.Sprintf("cnet-idem-%d", GinkgoRandomSeed()%1000)
		n, err := podnet.New(podnet.Options{NodeName: name, RootDir: root, PodCIDR: "10.91." + strconv.Itoa(int(GinkgoRandomSeed()%250)) + ".0/24"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, _ = runIP("link", "del", podnet.BridgeName(name))
			Expect(podnet.RemoveMasquerade(name)).To(Succeed())
			Expect(natRules()).NotTo(ContainSubstring("converge pods of " + name))
		})
		pod := podnet.Pod{UID: "0b6f4c1e-idem", Namespace: "default", Name: "idem"}
		first, err := n.Setup(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.IP).To(Satisfy(inCIDR(n.PodCIDR())))
		// One masquerade jump for the pod CIDR, none per pod.
		rules := natRules()
		Expect(rules).To(ContainSubstring("-A POSTROUTING -s " + n.PodCIDR() + ` -m comment --comment "converge pods of ` + name + `"`))
		Expect(rules).NotTo(ContainSubstring("-s " + first.IP + "/32"))
		again, err := n.Setup(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(first))

		// A restarted agent (a new Network on the same root dir) finds it.
		n2, err := podnet.New(podnet.Options{NodeName: name, RootDir: root, PodCIDR: n.PodCIDR()})
		Expect(err).NotTo(HaveOccurred())
		Expect(n2.List()).To(ConsistOf(pod.UID))
		found, ok := n2.Lookup(pod.UID)
		Expect(ok).To(BeTrue())
		Expect(found.IP).To(Equal(first.IP))

		Expect(n2.Teardown(ctx, pod.UID)).To(Succeed())
		Expect(n2.Teardown(ctx, pod.UID)).To(Succeed())
		Expect(n2.List()).To(BeEmpty())
		Expect(first.NetNSPath).NotTo(BeAnExistingFile())
	})

	It("sets pods without hostPorts up itself, in one address space with the CNI chain's pods", func(ctx SpecContext) {
		root := GinkgoT().TempDir()
		seed := int(GinkgoRandomSeed() % 250)
		name := fmt.Sprintf("cnet-mix-%d", seed)
		cidr := fmt.Sprintf("10.96.%d.0/24", seed)
		n, err := podnet.New(podnet.Options{NodeName: name, RootDir: root, PodCIDR: cidr, Logger: GinkgoLogr})
		Expect(err).NotTo(HaveOccurred())
		br := podnet.BridgeName(name)
		DeferCleanup(func() {
			_, _ = runIP("link", "del", br)
			Expect(podnet.RemoveMasquerade(name)).To(Succeed())
		})
		ipam := filepath.Join(root, "cni", "ipam", podnet.NetworkName(name))
		setup := func(uid string, ports ...podnet.PortMapping) podnet.Sandbox {
			GinkgoHelper()
			DeferCleanup(func(ctx SpecContext) { Expect(n.Teardown(ctx, uid)).To(Succeed()) }) // when the spec fails
			sb, err := n.Setup(ctx, podnet.Pod{UID: uid, Namespace: "default", Name: uid, Ports: ports})
			Expect(err).NotTo(HaveOccurred())
			Expect(sb.IP).To(Satisfy(inCIDR(cidr)))
			b, err := os.ReadFile(filepath.Join(ipam, sb.IP))
			Expect(err).NotTo(HaveOccurred(), "host-local's allocation file")
			Expect(string(b)).To(Equal(uid + "\r\neth0"))
			return sb
		}
		a := setup("mix-a")
		Expect(a.Veth).NotTo(BeEmpty(), "no plugin ran")
		Expect(vethsOn(br)).To(ConsistOf(a.Veth))
		Expect(addrsOf(br)).To(ConsistOf(fmt.Sprintf("10.96.%d.1/24", seed)))
		out, err := exec.Command("nsenter", "--net="+a.NetNSPath, "ip", "-4", "-o", "addr", "show", "dev", "eth0").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("inet " + a.IP + "/24"))
		out, err = exec.Command("nsenter", "--net="+a.NetNSPath, "ip", "-4", "route").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring(fmt.Sprintf("default via 10.96.%d.1 dev eth0", seed)))

		port := int32(20000 + rand.IntN(20000))
		b := setup("mix-b", podnet.PortMapping{HostPort: port, ContainerPort: 80, Protocol: "tcp"})
		Expect(b.Veth).To(BeEmpty(), "hostPorts: the CNI chain with portmap")
		By("a neighbour entry left by an earlier pod of the next IP, which the new pod's gratuitous ARP corrects")
		next := fmt.Sprintf("10.96.%d.4", seed) // a .2, b .3: round-robin
		// A bridge's MAC follows its ports' lowest unless set, and each change
		// flushes its neighbours: pinned, the entry stays for the ARP to correct.
		l, err := netlink.LinkByName(br)
		Expect(err).NotTo(HaveOccurred())
		Expect(runIP("link", "set", br, "address", l.Attrs().HardwareAddr.String())).Error().NotTo(HaveOccurred())
		Expect(runIP("neigh", "replace", next, "lladdr", "02:00:00:00:00:01", "dev", br, "nud", "stale")).Error().NotTo(HaveOccurred())
		c := setup("mix-c")
		Expect(c.IP).To(Equal(next))
		out, err = exec.Command("nsenter", "--net="+c.NetNSPath, "ip", "-o", "link", "show", "eth0").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		_, mac, _ := strings.Cut(string(out), "link/ether ")
		mac, _, _ = strings.Cut(mac, " ")
		Expect(mac).To(HaveLen(17))
		Eventually(func() (string, error) { return runIP("neigh", "show", next, "dev", br) }).Should(ContainSubstring("lladdr " + mac))
		Expect([]string{a.IP, b.IP, c.IP}).To(HaveLen(3))
		Expect(a.IP).NotTo(Equal(b.IP))
		Expect(c.IP).NotTo(BeElementOf(a.IP, b.IP))
		Expect(vethsOn(br)).To(HaveLen(3))

		By("a setup interrupted before its record, then each pod's teardown")
		Expect(os.Remove(filepath.Join(root, "podnet", "mix-c.json"))).To(Succeed())
		for _, uid := range []string{"mix-a", "mix-b", "mix-c"} {
			Expect(n.Teardown(ctx, uid)).To(Succeed())
		}
		Expect(vethsOn(br)).To(BeEmpty())
		left, _ := filepath.Glob(filepath.Join(ipam, "10.*"))
		Expect(left).To(BeEmpty(), "IP allocations")
		Expect(n.List()).To(BeEmpty())
		Expect(iptablesSave()).NotTo(ContainSubstring(strconv.Itoa(int(port))), "hostPort rules removed")
	})

	It("replaces a bridge of its node's name left with another address, and keeps one that pods still use", func(ctx SpecContext) {
		root := GinkgoT().TempDir()
		seed := int(GinkgoRandomSeed() % 250)
		name := fmt.Sprintf("cnet-stale-%d", seed)
		br := podnet.BridgeName(name)
		DeferCleanup(func() {
			_, _ = runIP("link", "del", br)
			Expect(podnet.RemoveMasquerade(name)).To(Succeed())
		})
		By("a bridge left by an earlier run with another pod CIDR")
		Expect(runIP("link", "add", br, "type", "bridge")).Error().NotTo(HaveOccurred())
		Expect(runIP("addr", "add", fmt.Sprintf("10.93.%d.1/24", seed), "dev", br)).Error().NotTo(HaveOccurred())
		Expect(runIP("link", "set", br, "up")).Error().NotTo(HaveOccurred())
		cidr := fmt.Sprintf("10.94.%d.0/24", seed)
		n, err := podnet.New(podnet.Options{NodeName: name, RootDir: root, PodCIDR: cidr, Logger: GinkgoLogr})
		Expect(err).NotTo(HaveOccurred())
		pod := podnet.Pod{UID: "7c1d2e3f-stale", Namespace: "default", Name: "stale"}
		sb, err := n.Setup(ctx, pod)
		Expect(err).NotTo(HaveOccurred())
		Expect(sb.IP).To(Satisfy(inCIDR(cidr)))
		Expect(addrsOf(br)).To(ConsistOf(fmt.Sprintf("10.94.%d.1/24", seed)))

		By("a node of that name with yet another CIDR while the pod still uses the bridge")
		_, err = podnet.New(podnet.Options{NodeName: name, RootDir: GinkgoT().TempDir(), PodCIDR: fmt.Sprintf("10.95.%d.0/24", seed), Logger: GinkgoLogr})
		Expect(err).NotTo(HaveOccurred())
		Expect(addrsOf(br)).To(ConsistOf(fmt.Sprintf("10.94.%d.1/24", seed)), "a bridge in use is left alone")
		Expect(vethsOn(br)).To(HaveLen(1))
		Expect(podnet.RemoveBridge(name)).To(MatchError(ContainSubstring("still used")))

		By("the node going for good")
		Expect(n.Teardown(ctx, pod.UID)).To(Succeed())
		Expect(podnet.RemoveBridge(name)).To(Succeed())
		Expect(linkExists(br)).To(BeFalse())
		Expect(podnet.RemoveBridge(name)).To(Succeed(), "a missing bridge is no error")
	})

	It("names the missing plugin and creates nothing", func(ctx SpecContext) {
		root := GinkgoT().TempDir()
		n, err := podnet.New(podnet.Options{NodeName: "cnet-empty", RootDir: root, PodCIDR: "10.92.0.0/24", BinDirs: []string{GinkgoT().TempDir()}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(podnet.RemoveMasquerade("cnet-empty")).To(Succeed()) })
		_, err = n.Setup(ctx, podnet.Pod{UID: "u1", Namespace: "default", Name: "p"})
		Expect(errors.Is(err, podnet.ErrPluginMissing)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("containernetworking-plugins"))
		Expect(n.List()).To(BeEmpty())
	})
})

func runIP(args ...string) (string, error) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	return string(out), err
}

func iptablesSave() string {
	out, _ := exec.Command("iptables-save", "-t", "nat").CombinedOutput()
	return string(out)
}

func linkExists(name string) bool {
	_, err := netlink.LinkByName(name)
	return err == nil
}

func addrsOf(name string) []string {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil
	}
	as, _ := netlink.AddrList(l, netlink.FAMILY_V4)
	var out []string
	for _, a := range as {
		out = append(out, a.IPNet.String())
	}
	return out
}

// vethsOn lists the interfaces enslaved to the bridge.
func vethsOn(bridge string) []string {
	br, err := netlink.LinkByName(bridge)
	if err != nil {
		return nil
	}
	ls, _ := netlink.LinkList()
	var out []string
	for _, l := range ls {
		if l.Attrs().MasterIndex == br.Attrs().Index {
			out = append(out, l.Attrs().Name)
		}
	}
	return out
}

// hostAddr is a non-loopback IPv4 address of this machine.
func hostAddr() string {
	ls, _ := netlink.AddrList(nil, netlink.FAMILY_V4)
	for _, a := range ls {
		if !a.IP.IsLoopback() && !strings.HasPrefix(a.IP.String(), "10.") {
			return a.IP.String()
		}
	}
	for _, a := range ls {
		if !a.IP.IsLoopback() {
			return a.IP.String()
		}
	}
	return "127.0.0.1"
}

// natRules is the host's nat table as iptables -S prints it.
func natRules() string {
	GinkgoHelper()
	out, err := exec.Command("iptables", "-w", "-t", "nat", "-S").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	return string(out)
}
