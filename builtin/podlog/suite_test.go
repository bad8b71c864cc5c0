package podlog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestPodLog(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pods/log")
}

var (
	env   *testenv.Environment
	c     *client.Client
	agent *fakeAgent
	nsN   atomic.Int32
)

// fakeAgent serves /containerLogs like a node agent. Container "app" logs two
// lines; with follow=true it sends one line, then a second once released, then
// ends (or tells gone when its client leaves first). Container "waiting" answers 400 as an agent does for a container that
// has not started.
type fakeAgent struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []*url.URL
	release chan struct{}
	gone    chan struct{} // a follow request ended because its client left
}

func (a *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.reqs = append(a.reqs, r.URL)
	a.mu.Unlock()
	parts := splitPath(r.URL.Path)
	if len(parts) != 4 || parts[0] != "containerLogs" {
		http.NotFound(w, r)
		return
	}
	ns, pod, ctr := parts[1], parts[2], parts[3]
	if ctr == "waiting" {
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", ctr, pod), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	if r.URL.Query().Get("follow") != "true" {
		_, _ = fmt.Fprintf(w, "%s/%s line 1\n%s/%s line 2\n", ns, pod, ns, pod)
		return
	}
	_, _ = io.WriteString(w, "first\n")
	w.(http.Flusher).Flush()
	select {
	case <-a.release:
	case <-r.Context().Done():
		a.gone <- struct{}{}
		return
	}
	_, _ = io.WriteString(w, "second\n")
}

func (a *fakeAgent) last() *url.URL {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reqs[len(a.reqs)-1]
}

func splitPath(p string) []string {
	var out []string
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

// WirePodLog does in a test what the control plane does in production: add
// the log subresource to the pods resource of the running API server.
func WirePodLog(env *testenv.Environment) {
	sub, err := podlog.New(podlog.Options{NodeAddress: podlog.NodeAddressFromStore(env.ControlPlane.Storage())})
	Expect(err).NotTo(HaveOccurred())
	env.AddSubresource(corev1.GroupVersion().WithResource("pods"), "log", sub)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(10 * time.Second)
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	WirePodLog(env)
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	agent = &fakeAgent{release: make(chan struct{}), gone: make(chan struct{}, 8)}
	agent.srv = httptest.NewServer(agent)
	_, portStr, _ := net.SplitHostPort(agent.srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	node := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: "node-1"}}
	Expect(c.Create(ctx, node)).To(Succeed())
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	Expect(c.Status().Update(ctx, node)).To(Succeed())
})

var _ = AfterSuite(func() {
	if agent != nil {
		agent.srv.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("logs-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func pod(ctx context.Context, ns, name, node string, containers ...string) {
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	for _, ctr := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: ctr, Image: "busybox"})
	}
	Expect(c.Create(ctx, p)).To(Succeed())
}

// get requests the log of ns/name with query q.
func get(ctx context.Context, ns, name, q string) *http.Response {
	u := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/log?%s", env.URL, ns, name, q)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(resp.Body.Close)
	return resp
}

// status decodes a Status answer.
func status(resp *http.Response) api.Status {
	var st api.Status
	Expect(json.NewDecoder(resp.Body).Decode(&st)).To(Succeed())
	return st
}

var _ = Describe("pods/log", func() {
	It("is listed in discovery", func(ctx SpecContext) {
		resp, err := http.Get(env.URL + "/api/v1")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		var list struct {
			Resources []struct {
				Name  string   `json:"name"`
				Kind  string   `json:"kind"`
				Verbs []string `json:"verbs"`
			} `json:"resources"`
		}
		Expect(json.NewDecoder(resp.Body).Decode(&list)).To(Succeed())
		found := false
		for _, r := range list.Resources {
			if r.Name == "pods/log" {
				found = true
				Expect(r.Kind).To(Equal("Pod"))
				Expect(r.Verbs).To(Equal([]string{"get"}))
			}
		}
		Expect(found).To(BeTrue())
	})

	It("streams the only container's log from the node agent, passing the options on", func(ctx SpecContext) {
		ns := namespace(ctx)
		pod(ctx, ns, "p", "node-1", "app")
		resp := get(ctx, ns, "p", "tailLines=10&timestamps=true&limitBytes=500")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Type")).To(Equal("text/plain"))
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(body)).To(Equal(ns + "/p line 1\n" + ns + "/p line 2\n"))
		u := agent.last()
		Expect(u.Path).To(Equal("/containerLogs/" + ns + "/p/app"))
		Expect(u.Query()).To(Equal(url.Values{"tailLines": {"10"}, "timestamps": {"true"}, "limitBytes": {"500"}}))
	})

	It("follows: each line arrives as the agent writes it, until the agent ends", func(ctx SpecContext) {
		ns := namespace(ctx)
		pod(ctx, ns, "p", "node-1", "app", "sidecar")
		resp := get(ctx, ns, "p", "container=app&follow=true")
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		r := bufio.NewReader(resp.Body)
		line, err := r.ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("first\n")) // while the agent still holds the stream open
		agent.release <- struct{}{}
		rest, err := io.ReadAll(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(rest)).To(Equal("second\n"))
		Expect(agent.last().Query().Get("follow")).To(Equal("true"))
	})

	It("stops following when the client goes away", func(ctx SpecContext) {
		ns := namespace(ctx)
		pod(ctx, ns, "p", "node-1", "app")
		cctx, cancel := context.WithCancel(ctx)
		resp := get(cctx, ns, "p", "follow=true")
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(Equal("first\n"))
		cancel()
		// The API server cancels its request to the agent.
		Eventually(agent.gone).Should(Receive())
	})

	DescribeTable("refuses with Kubernetes' errors",
		func(ctx SpecContext, containers []string, node, query string, code int, reason, message string) {
			ns := namespace(ctx)
			pod(ctx, ns, "p", node, containers...)
			resp := get(ctx, ns, "p", query)
			Expect(resp.StatusCode).To(Equal(code))
			st := status(resp)
			Expect(st.Reason).To(Equal(reason))
			Expect(st.Message).To(Equal(message))
		},
		Entry("several containers", []string{"a", "b"}, "node-1", "",
			400, "BadRequest", "a container name must be specified for pod p, choose one of: [a b]"),
		Entry("unknown container", []string{"a"}, "node-1", "container=z",
			400, "BadRequest", "container z is not valid for pod p"),
		Entry("not scheduled", []string{"a"}, "", "",
			400, "BadRequest", "pod p does not have a host assigned"),
		Entry("unknown node", []string{"a"}, "node-9", "",
			404, "NotFound", `nodes "node-9" not found`),
		Entry("bad option", []string{"a"}, "node-1", "tailLines=-1",
			422, "Invalid", `PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`),
		Entry("agent error passed on", []string{"waiting"}, "node-1", "",
			400, "BadRequest", `container "waiting" in pod "p" is waiting to start: ContainerCreating`),
	)

	It("answers 404 for a missing pod", func(ctx SpecContext) {
		ns := namespace(ctx)
		resp := get(ctx, ns, "nope", "")
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
		Expect(status(resp).Message).To(Equal(`pods "nope" not found`))
	})
})
