package images

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// jsonpath reads one field of an object with kubectl.
func jsonpath(kind, name, path string) string {
	GinkgoHelper()
	out, err := kubectl("get", kind, name, "-o", "jsonpath={"+path+"}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// busyboxCmd is the command of a busybox container running script: the image
// holds /bin/busybox only, so applets are called through it.
func busyboxCmd(script string) string {
	return fmt.Sprintf(`["/bin/busybox", "sh", "-c", "B=/bin/busybox; %s"]`, script)
}

var _ = Describe("converge up --runtime containerd with images from a registry", Ordered, func() {
	var clusterIP, nodePort string

	It("runs kubectl create deployment with a registry image, reachable through its ClusterIP and NodePort", func() {
		mustKubectl("create", "deployment", "web", "--image="+suite.public.Host+"/web:v1", "--port=8080", "--replicas=2")
		mustKubectl("rollout", "status", "deployment/web", "--timeout=90s")
		mustKubectl("expose", "deployment", "web", "--port=80", "--target-port=8080", "--type=NodePort")
		clusterIP = jsonpath("service", "web", ".spec.clusterIP")
		nodePort = jsonpath("service", "web", ".spec.ports[0].nodePort")
		Expect(clusterIP).To(HavePrefix("10.43.240."))
		Expect(nodePort).NotTo(BeEmpty())
		Eventually(func() (string, error) { return httpGet("http://" + clusterIP + "/") }).Should(HavePrefix("web v1 web-"))
		Eventually(func() (string, error) { return httpGet("http://127.0.0.1:" + nodePort + "/") }).Should(HavePrefix("web v1 web-"))

		// Pulled, with the kubelet's words, and each pod has its own IP from the pod CIDR.
		events := mustKubectl("get", "events", "--field-selector", "reason=Pulled", "-o", "jsonpath={.items[*].message}")
		Expect(events).To(ContainSubstring(`Successfully pulled image "` + suite.public.Host + `/web:v1"`))
		ips := mustKubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}")
		Expect(strings.Fields(ips)).To(HaveLen(2))
		for _, ip := range strings.Fields(ips) {
			Expect(ip).To(HavePrefix("10.42.240."))
		}
	})

	It("rolls out a new image with kubectl set image, pulling it", func() {
		mustKubectl("set", "image", "deployment/web", "web="+suite.public.Host+"/web:v2")
		mustKubectl("rollout", "status", "deployment/web", "--timeout=90s")
		Eventually(func() (string, error) { return httpGet("http://" + clusterIP + "/") }).Should(HavePrefix("web v2 "))
		Consistently(func() (string, error) { return httpGet("http://127.0.0.1:" + nodePort + "/") }, 2*time.Second).Should(HavePrefix("web v2 "))
	})

	It("resolves Services by name and reaches them from inside a busybox pod", func() {
		kubectlApply(`apiVersion: v1
kind: Pod
metadata: {name: bb}
spec:
  containers:
  - name: bb
    image: ` + suite.public.Host + `/busybox:v1
    command: ["/bin/busybox", "sleep", "3600"]
`)
		mustKubectl("wait", "--for=condition=Ready", "pod/bb", "--timeout=90s")
		resolv := mustKubectl("exec", "bb", "--", "/bin/busybox", "cat", "/etc/resolv.conf")
		Expect(resolv).To(ContainSubstring("search default.svc.cluster.local svc.cluster.local cluster.local"))
		Expect(resolv).To(ContainSubstring("nameserver 10.43.240.10"))
		Expect(resolv).To(ContainSubstring("options ndots:5"))
		Eventually(func() (string, error) {
			return kubectl("exec", "bb", "--", "/bin/busybox", "nslookup", "web.default.svc.cluster.local")
		}).Should(ContainSubstring(clusterIP))
		Eventually(func() (string, error) {
			return kubectl("exec", "bb", "--", "/bin/busybox", "nslookup", "kubernetes.default.svc.cluster.local")
		}).Should(ContainSubstring("10.43.240.1"))
		Eventually(func() (string, error) {
			return kubectl("exec", "bb", "--", "/bin/busybox", "wget", "-qO-", "http://web")
		}).Should(HavePrefix("web v2 "))
	})

	It("answers the NodePort and a hostPort at the node's InternalIP, from the host and from a pod", func() {
		nodeIP := strings.TrimSpace(mustKubectl("get", "nodes", "-o", `jsonpath={.items[0].status.addresses[?(@.type=="InternalIP")].address}`))
		Expect(nodeIP).NotTo(BeElementOf("", "127.0.0.1"), "pods cannot reach the node at their own loopback")
		url := "http://" + nodeIP + ":" + nodePort + "/"
		Eventually(func() (string, error) { return httpGet(url) }).Should(HavePrefix("web v2 "))
		Eventually(func() (string, error) {
			return kubectl("exec", "bb", "--", "/bin/busybox", "wget", "-qO-", url)
		}).Should(HavePrefix("web v2 "))

		port := strconv.Itoa(40000 + rand.IntN(9000))
		kubectlApply(`apiVersion: v1
kind: Pod
metadata: {name: hostport}
spec:
  containers:
  - name: httpd
    image: ` + suite.public.Host + `/busybox:v1
    command: ` + busyboxCmd(`$B mkdir -p /www && $B hostname > /www/index.html && exec $B httpd -f -p 8080 -h /www`) + `
    ports: [{containerPort: 8080, hostPort: ` + port + `}]
`)
		mustKubectl("wait", "--for=condition=Ready", "pod/hostport", "--timeout=90s")
		url = "http://" + nodeIP + ":" + port + "/"
		Eventually(func() (string, error) { return httpGet(url) }).Should(Equal("hostport\n"))
		Eventually(func() (string, error) {
			return kubectl("exec", "bb", "--", "/bin/busybox", "wget", "-qO-", url)
		}).Should(Equal("hostport\n"))
		mustKubectl("delete", "pod", "hostport", "--wait", "--timeout=60s")
	})

	It("lets two pods of one Deployment reach each other by pod IP", func() {
		kubectlApply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: peers}
spec:
  replicas: 2
  selector: {matchLabels: {app: peers}}
  template:
    metadata: {labels: {app: peers}}
    spec:
      containers:
      - name: httpd
        image: ` + suite.public.Host + `/busybox:v1
        command: ` + busyboxCmd(`$B mkdir -p /www && $B hostname > /www/index.html && exec $B httpd -f -p 8080 -h /www`) + `
`)
		mustKubectl("rollout", "status", "deployment/peers", "--timeout=90s")
		names := strings.Fields(mustKubectl("get", "pods", "-l", "app=peers", "-o", "jsonpath={.items[*].metadata.name}"))
		Expect(names).To(HaveLen(2))
		for i, from := range names {
			to := names[1-i]
			ip := jsonpath("pod", to, ".status.podIP")
			Eventually(func() (string, error) {
				return kubectl("exec", from, "--", "/bin/busybox", "wget", "-qO-", "http://"+ip+":8080/")
			}).Should(ContainSubstring(to))
		}
	})

	It("pulls a protected image only with the right pull secret", func() {
		image := suite.private.Host + "/team/busybox:v1"
		pod := func(name, secret string) string {
			m := `apiVersion: v1
kind: Pod
metadata: {name: ` + name + `}
spec:
  containers:
  - name: c
    image: ` + image + `
    command: ["/bin/busybox", "sleep", "3600"]
`
			if secret != "" {
				m += "  imagePullSecrets: [{name: " + secret + "}]\n"
			}
			return m
		}
		kubectlApply(pod("private-nosecret", ""))
		Eventually(func() string {
			return jsonpath("pod", "private-nosecret", ".status.containerStatuses[0].state.waiting.reason")
		}).Should(BeElementOf("ErrImagePull", "ImagePullBackOff"))
		Expect(jsonpath("pod", "private-nosecret", ".status.containerStatuses[0].state.waiting.message")).
			To(ContainSubstring("no basic auth credentials"))

		mustKubectl("create", "secret", "docker-registry", "wrongcred", "--docker-server="+suite.private.Host,
			"--docker-username="+user, "--docker-password=not-the-password")
		kubectlApply(pod("private-wrong", "wrongcred"))
		Eventually(func() string {
			return jsonpath("pod", "private-wrong", ".status.containerStatuses[0].state.waiting.message")
		}).Should(ContainSubstring("401 Unauthorized"))

		mustKubectl("create", "secret", "docker-registry", "regcred", "--docker-server="+suite.private.Host,
			"--docker-username="+user, "--docker-password="+pass)
		kubectlApply(pod("private-ok", "regcred"))
		mustKubectl("wait", "--for=condition=Ready", "pod/private-ok", "--timeout=90s")
	})

	It("shows ImagePullBackOff with the registry's message for an image that does not exist", func() {
		mustKubectl("run", "ghost", "--image="+suite.public.Host+"/nope:v1", "--restart=Never")
		Eventually(func() string {
			return jsonpath("pod", "ghost", ".status.containerStatuses[0].state.waiting.reason")
		}).Should(Equal("ImagePullBackOff"))
		Expect(jsonpath("pod", "ghost", ".status.containerStatuses[0].state.waiting.message")).
			To(ContainSubstring(suite.public.Host + "/nope:v1"))
		events := mustKubectl("get", "events", "--field-selector", "involvedObject.name=ghost", "-o", "jsonpath={.items[*].message}")
		Expect(events).To(And(ContainSubstring("Failed to pull image"), ContainSubstring("not found")))
	})
})

// On failure, what a user would look at: the pods, their description and the events.
var _ = ReportAfterEach(func(r SpecReport) {
	if !r.Failed() || suite.kubeconfig == "" {
		return
	}
	suite.failed = true
	for _, args := range [][]string{
		{"get", "pods", "-o", "wide"},
		{"describe", "pods"},
		{"get", "events", "--sort-by=.lastTimestamp"},
	} {
		out, _ := kubectl(args...)
		GinkgoWriter.Printf("--- kubectl %s ---\n%s\n", strings.Join(args, " "), out)
	}
})
