package podproxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/podproxy"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestPodProxy(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pods/proxy")
}

var (
	env  *testenv.Environment
	c    *client.Client
	srv  *httptest.Server
	port int
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	// What the control plane does: add the subresource to pods.
	sub, err := podproxy.New(env.ControlPlane.Storage(), nil)
	Expect(err).NotTo(HaveOccurred())
	env.AddSubresource(corev1.GroupVersion().WithResource("pods"), "proxy", sub)
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	// The "pod": echoes what it got.
	// It listens on a loopback address of its node's pod CIDR, as a pod of
	// the process runtime does.
	l, err := net.Listen("tcp", "127.91.0.5:0")
	Expect(err).NotTo(HaveOccurred())
	srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s?%s auth=%q body=%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body)
	})}}
	srv.Start()
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ = strconv.Atoi(p)
	node := &corev1.Node{}
	node.Name = "n1"
	node.Spec.PodCIDR, node.Spec.PodCIDRs = "127.91.0.0/16", []string{"127.91.0.0/16"}
	Expect(c.Create(ctx, node)).To(Succeed())

	for name, ip := range map[string]string{"server": "127.91.0.5", "host-loopback": "127.0.0.1", "metadata": "169.254.169.254"} {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = name, "default"
		pod.Spec.NodeName = "n1"
		pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: int32(port)}}}}
		Expect(c.Create(ctx, pod)).To(Succeed())
		pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		Expect(c.Status().Update(ctx, pod)).To(Succeed())
	}
	noIP := &corev1.Pod{}
	noIP.Name, noIP.Namespace = "pending", "default"
	noIP.Spec.Containers = []corev1.Container{{Name: "c", Image: "x"}}
	Expect(c.Create(ctx, noIP)).To(Succeed())
})

var _ = AfterSuite(func() {
	if srv != nil {
		srv.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func call(ctx context.Context, method, path, body string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, env.URL+"/api/v1/namespaces/default/pods/"+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, string(b)
}

var _ = Describe("pods/proxy", func() {
	It("forwards a GET with its path and query to the pod's first containerPort, without the client's credentials", func(ctx SpecContext) {
		code, body := call(ctx, http.MethodGet, "server/proxy/read/more?x=1", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(Equal(`GET /read/more?x=1 auth="" body=`))
	}, SpecTimeout(10*time.Second))

	It("forwards a POST with its body to name:port, and the root when no path follows", func(ctx SpecContext) {
		code, body := call(ctx, http.MethodPost, fmt.Sprintf("http:server:%d/proxy/write", port), `{"Source":"prestop"}`)
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(HavePrefix(`POST /write?`))
		Expect(body).To(HaveSuffix(`body={"Source":"prestop"}`))
		code, body = call(ctx, http.MethodGet, fmt.Sprintf("server:%d/proxy", port), "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(HavePrefix("GET /?"))
	}, SpecTimeout(10*time.Second))

	DescribeTable("answers Status errors", func(ctx SpecContext, path string, want int, msg string) {
		code, body := call(ctx, http.MethodGet, path, "")
		Expect(code).To(Equal(want))
		Expect(body).To(ContainSubstring(`"kind":"Status"`))
		Expect(body).To(ContainSubstring(msg))
	},
		Entry("an unknown pod", "missing/proxy/", http.StatusNotFound, `pods \"missing\" not found`),
		Entry("a malformed name", "ftp:server:80/proxy/", http.StatusBadRequest, "invalid pod request"),
		Entry("a pod without an IP", "pending/proxy/", http.StatusBadRequest, "has no IP address"),
		Entry("a port nothing listens on", "server:1/proxy/", http.StatusServiceUnavailable, "error trying to reach service"),
		Entry("a pod claiming the host's loopback, outside its node's pod CIDR", "host-loopback/proxy/", http.StatusBadRequest, "address not allowed"),
		Entry("a pod claiming a link-local metadata address", "metadata/proxy/", http.StatusBadRequest, "address not allowed"),
	)
})
