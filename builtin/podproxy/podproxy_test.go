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
	RunSpecs(t, "proxy subresources")
}

var (
	env   *testenv.Environment
	c     *client.Client
	srv   *httptest.Server // the "pod": echoes what it got
	tlsrv *httptest.Server // the same pod's HTTPS port (self-signed)
	agent *httptest.Server // the node agent's server
	port  int
)

// portOf is the port srv listens on.
func portOf(s *httptest.Server) int {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

// echo answers what it got; /html answers a page with links, /redirect a
// redirect to an absolute path.
func echo(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/html":
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, `<a href="/rewriteme">test</a><IMG SRC="/img.png"><a href="rel">r</a><a href="http://elsewhere.example/x">e</a>`)
		return
	case "/redirect":
		http.Redirect(w, r, "/moved/here?q=1", http.StatusFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%t %s %s?%s auth=%q body=%s", r.TLS != nil, r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	// What the control plane does: add the subresources to pods, services
	// and nodes.
	proxies, err := podproxy.New(podproxy.Options{Store: env.ControlPlane.Storage()})
	Expect(err).NotTo(HaveOccurred())
	env.AddSubresource(corev1.GroupVersion().WithResource("pods"), "proxy", proxies.Pods())
	env.AddSubresource(corev1.GroupVersion().WithResource("services"), "proxy", proxies.Services())
	env.AddSubresource(corev1.GroupVersion().WithResource("nodes"), "proxy", proxies.Nodes())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	// The pod listens on a loopback address of its node's pod CIDR, as a
	// pod of the process runtime does.
	l, err := net.Listen("tcp", "127.91.0.5:0")
	Expect(err).NotTo(HaveOccurred())
	srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(echo)}}
	srv.Start()
	port = portOf(srv)
	tl, err := net.Listen("tcp", "127.91.0.5:0")
	Expect(err).NotTo(HaveOccurred())
	tlsrv = &httptest.Server{Listener: tl, Config: &http.Server{Handler: http.HandlerFunc(echo)}}
	tlsrv.StartTLS()
	// The node agent on the node's (loopback) InternalIP.
	agent = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "agent %s %s", r.URL.Path, r.Header.Get("Authorization"))
	}))

	node := &corev1.Node{}
	node.Name = "n1"
	node.Spec.PodCIDR, node.Spec.PodCIDRs = "127.91.0.0/16", []string{"127.91.0.0/16"}
	Expect(c.Create(ctx, node)).To(Succeed())
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(portOf(agent))
	Expect(c.Status().Update(ctx, node)).To(Succeed())
	portless := &corev1.Node{}
	portless.Name = "no-agent"
	Expect(c.Create(ctx, portless)).To(Succeed())

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

	// Services: web's Endpoints name the server pod on both its ports (the
	// endpoints controller is not running here); trap's name pods whose IPs
	// are the host's loopback or not theirs; empty has none.
	service := func(name string, ports ...corev1.ServicePort) {
		svc := &corev1.Service{}
		svc.Name, svc.Namespace = name, "default"
		svc.Spec.Ports = ports
		Expect(c.Create(ctx, svc)).To(Succeed())
	}
	service("web", corev1.ServicePort{Name: "http", Port: 80}, corev1.ServicePort{Name: "tls", Port: 443})
	service("trap", corev1.ServicePort{Port: 80})
	service("empty", corev1.ServicePort{Port: 80})
	ref := func(pod string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: pod}
	}
	endpoints := func(name string, subsets ...corev1.EndpointSubset) {
		eps := &corev1.Endpoints{}
		eps.Name, eps.Namespace = name, "default"
		eps.Subsets = subsets
		Expect(c.Create(ctx, eps)).To(Succeed())
	}
	endpoints("web", corev1.EndpointSubset{
		Addresses: []corev1.EndpointAddress{{IP: "127.91.0.5", TargetRef: ref("server")}},
		Ports:     []corev1.EndpointPort{{Name: "http", Port: int32(port)}, {Name: "tls", Port: int32(portOf(tlsrv))}},
	})
	endpoints("trap", corev1.EndpointSubset{
		Addresses: []corev1.EndpointAddress{
			{IP: "127.0.0.1", TargetRef: ref("host-loopback")}, // the pod claims the host's loopback
			{IP: "127.91.0.5", TargetRef: ref("metadata")},     // not that pod's IP
			{IP: "127.91.0.5"}, // no pod at all
		},
		Ports: []corev1.EndpointPort{{Port: int32(port)}},
	})
})

var _ = AfterSuite(func() {
	for _, s := range []*httptest.Server{srv, tlsrv, agent} {
		if s != nil {
			s.Close()
		}
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// call sends method to path below /api/v1/ with a bearer token, without
// following redirects.
func call(ctx context.Context, method, path, body string) (*http.Response, string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, method, env.URL+"/api/v1/"+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer secret")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp, string(b)
}

// get is call's status and body.
func get(ctx context.Context, method, path, body string) (int, string) {
	GinkgoHelper()
	resp, b := call(ctx, method, path, body)
	return resp.StatusCode, b
}

var _ = Describe("pods/proxy", func() {
	It("forwards a GET with its path and query to the pod's first containerPort, without the client's credentials", func(ctx SpecContext) {
		code, body := get(ctx, http.MethodGet, "namespaces/default/pods/server/proxy/read/more?x=1", "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(Equal(`false GET /read/more?x=1 auth="" body=`))
	}, SpecTimeout(10*time.Second))

	It("forwards a POST with its body to name:port, and any method with no path to the root", func(ctx SpecContext) {
		code, body := get(ctx, http.MethodPost, fmt.Sprintf("namespaces/default/pods/http:server:%d/proxy/write", port), `{"Source":"prestop"}`)
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(HavePrefix(`false POST /write?`))
		Expect(body).To(HaveSuffix(`body={"Source":"prestop"}`))
		code, body = get(ctx, http.MethodPut, fmt.Sprintf("namespaces/default/pods/server:%d/proxy?method=PUT", port), "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(HavePrefix("false PUT /?method=PUT"))
	}, SpecTimeout(10*time.Second))

	It("redirects a GET or HEAD with no path to .../proxy/, keeping the query, as Kubernetes", func(ctx SpecContext) {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			resp, _ := call(ctx, m, "namespaces/default/pods/server/proxy?method="+m, "")
			Expect(resp.StatusCode).To(Equal(http.StatusMovedPermanently))
			Expect(resp.Header.Get("Location")).To(Equal("/api/v1/namespaces/default/pods/server/proxy/?method=" + m))
		}
	}, SpecTimeout(10*time.Second))

	It("reaches an HTTPS port with a self-signed certificate", func(ctx SpecContext) {
		code, body := get(ctx, http.MethodGet, fmt.Sprintf("namespaces/default/pods/https:server:%d/proxy/s", portOf(tlsrv)), "")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(HavePrefix("true GET /s?"))
	}, SpecTimeout(10*time.Second))

	It("rewrites the pod's absolute links and redirects to go through the proxy, and drops its CORS headers", func(ctx SpecContext) {
		resp, body := call(ctx, http.MethodGet, "namespaces/default/pods/server/proxy/html", "")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(body).To(Equal(`<a href="/api/v1/namespaces/default/pods/server/proxy/rewriteme">test</a>` +
			`<img src="/api/v1/namespaces/default/pods/server/proxy/img.png"><a href="rel">r</a><a href="http://elsewhere.example/x">e</a>`))
		Expect(resp.Header.Get("Access-Control-Allow-Origin")).To(BeEmpty())
		resp, _ = call(ctx, http.MethodGet, "namespaces/default/pods/server/proxy/redirect", "")
		Expect(resp.StatusCode).To(Equal(http.StatusFound))
		Expect(resp.Header.Get("Location")).To(Equal("/api/v1/namespaces/default/pods/server/proxy/moved/here?q=1"))
	}, SpecTimeout(10*time.Second))

})

var _ = Describe("services/proxy", func() {
	DescribeTable("forwards to a ready endpoint pod on the endpoint port of the Service port named or numbered",
		func(ctx SpecContext, name, want string) {
			code, body := get(ctx, http.MethodPatch, "namespaces/default/services/"+name+"/proxy/some/path?x=1", "b")
			Expect(code).To(Equal(http.StatusOK))
			Expect(body).To(Equal(want))
		},
		Entry("by port name", "web:http", `false PATCH /some/path?x=1 auth="" body=b`),
		Entry("by port number", "web:80", `false PATCH /some/path?x=1 auth="" body=b`),
		Entry("with scheme http", "http:web:http", `false PATCH /some/path?x=1 auth="" body=b`),
		Entry("over HTTPS by name", "https:web:tls", `true PATCH /some/path?x=1 auth="" body=b`),
		Entry("over HTTPS by number", "https:web:443", `true PATCH /some/path?x=1 auth="" body=b`),
	)

	It("redirects a GET with no path and rewrites links below the service's proxy path", func(ctx SpecContext) {
		resp, _ := call(ctx, http.MethodGet, "namespaces/default/services/web:http/proxy?method=GET", "")
		Expect(resp.StatusCode).To(Equal(http.StatusMovedPermanently))
		Expect(resp.Header.Get("Location")).To(Equal("/api/v1/namespaces/default/services/web:http/proxy/?method=GET"))
		_, body := call(ctx, http.MethodGet, "namespaces/default/services/web:http/proxy/html", "")
		Expect(body).To(HavePrefix(`<a href="/api/v1/namespaces/default/services/web:http/proxy/rewriteme">test</a>`))
	}, SpecTimeout(10*time.Second))

})

var _ = Describe("nodes/proxy", func() {
	It("forwards to the node agent's server, by default or on its own port, without the client's credentials", func(ctx SpecContext) {
		for _, name := range []string{"n1", fmt.Sprintf("n1:%d", portOf(agent)), fmt.Sprintf("https:n1:%d", portOf(agent))} {
			code, body := get(ctx, http.MethodGet, "nodes/"+name+"/proxy/healthz", "")
			Expect(code).To(Equal(http.StatusOK), name)
			Expect(body).To(Equal("agent /healthz "), name)
		}
	}, SpecTimeout(10*time.Second))

})

var _ = DescribeTable("pods/proxy, services/proxy and nodes/proxy answer Status errors", func(ctx SpecContext, path string, want int, msg string) {
	code, body := get(ctx, http.MethodGet, path, "")
	Expect(code).To(Equal(want))
	Expect(body).To(ContainSubstring(`"kind":"Status"`))
	Expect(body).To(ContainSubstring(msg))
},
	Entry("an unknown pod", "namespaces/default/pods/missing/proxy/", http.StatusNotFound, `pods \"missing\" not found`),
	Entry("a malformed pod name", "namespaces/default/pods/ftp:server:80/proxy/", http.StatusBadRequest, "invalid pod request"),
	Entry("a pod without an IP", "namespaces/default/pods/pending/proxy/", http.StatusBadRequest, "has no IP address"),
	Entry("a port nothing listens on", "namespaces/default/pods/server:1/proxy/", http.StatusServiceUnavailable, "error trying to reach service"),
	Entry("a pod claiming the host's loopback, outside its node's pod CIDR", "namespaces/default/pods/host-loopback/proxy/", http.StatusBadRequest, "address not allowed"),
	Entry("a pod claiming a link-local metadata address", "namespaces/default/pods/metadata/proxy/", http.StatusBadRequest, "address not allowed"),
	Entry("an unknown service", "namespaces/default/services/missing/proxy/", http.StatusNotFound, `services \"missing\" not found`),
	Entry("a malformed service name", "namespaces/default/services/ftp:web:80/proxy/", http.StatusBadRequest, "invalid service request"),
	Entry("a port number the service does not have", "namespaces/default/services/web:81/proxy/", http.StatusServiceUnavailable, `no service port 81 found for service \"web\"`),
	Entry("a port name no endpoint has", "namespaces/default/services/web:other/proxy/", http.StatusServiceUnavailable, `no endpoints available for service \"web\"`),
	Entry("a service without endpoints", "namespaces/default/services/empty/proxy/", http.StatusServiceUnavailable, `no endpoints available for service \"empty\"`),
	Entry("endpoints on the host's loopback, on another pod's IP or on no pod", "namespaces/default/services/trap/proxy/", http.StatusServiceUnavailable, `no endpoints available for service \"trap\"`),
	Entry("an unknown node", "nodes/missing/proxy/", http.StatusNotFound, `nodes \"missing\" not found`),
	Entry("a node without an agent port", "nodes/no-agent/proxy/", http.StatusBadRequest, "reports no kubelet endpoint port"),
	Entry("another port of a node on the host's loopback (etcd, the API server)", "nodes/n1:2379/proxy/", http.StatusBadRequest, "address not allowed"),
)
