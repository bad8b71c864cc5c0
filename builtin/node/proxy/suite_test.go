package proxy_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/builtin/node/proxy"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestProxy(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "service proxy")
}

var (
	env       *testenv.Environment
	c         *client.Client
	stopProxy context.CancelFunc
	proxyDone chan error
	nsN       atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(25 * time.Millisecond)
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	// Allocate cluster IPs from a random /24 of the default range, so parallel
	// test runs on this machine do not listen on the same addresses.
	a, err := servicenet.New(env.ControlPlane.Storage(), servicenet.Options{
		ServiceCIDR: fmt.Sprintf("127.%d.%d.0/24", 96+rand.IntN(16), rand.IntN(256)),
	})
	Expect(err).NotTo(HaveOccurred())
	reg := env.ControlPlane.Registry()
	res := *reg.Get(corev1.GroupVersion().WithResource("services"))
	servicenet.WrapServiceResource(&res, a)
	reg.Add(&res)

	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	p, err := proxy.New(proxy.Options{
		Client: c, NodePortAddresses: []string{"127.0.0.1"}, DialTimeout: 500 * time.Millisecond,
		Logger: logr.Discard(),
	})
	Expect(err).NotTo(HaveOccurred())
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopProxy, proxyDone = cancel, make(chan error, 1)
	go func() { proxyDone <- p.Start(pctx) }()
})

var _ = AfterSuite(func() {
	if stopProxy != nil {
		stopProxy()
		Eventually(proxyDone).Should(Receive(BeNil()))
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("proxy-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// backend is a TCP server standing in for a pod: it answers every connection
// with its name and closes it.
type backend struct {
	name string
	ln   net.Listener
}

// startBackend listens on a pod-like loopback address (127.10.x.y) on port.
func startBackend(name string, port int) *backend {
	ip := fmt.Sprintf("127.10.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250))
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	Expect(err).NotTo(HaveOccurred())
	b := &backend{name: name, ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(conn, b.name)
			_ = conn.Close()
		}
	}()
	DeferCleanup(func() { _ = ln.Close() })
	return b
}

func (b *backend) ip() string { return b.ln.Addr().(*net.TCPAddr).IP.String() }

func (b *backend) port() int32 { return int32(b.ln.Addr().(*net.TCPAddr).Port) }

// endpoint is one slice entry; ready nil means unknown (treated as ready).
func endpoint(ip string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

// selectorless creates a Service without selector (so no controller manages
// its endpoints) and an EndpointSlice for it.
func selectorless(ctx context.Context, ns, name string, typ corev1.ServiceType, targetPort int32, eps ...discoveryv1.Endpoint) (*corev1.Service, *discoveryv1.EndpointSlice) {
	svc := &corev1.Service{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: typ, Ports: []corev1.ServicePort{{Name: "tcp", Port: 8080, TargetPort: api.FromInt(int(targetPort))}}},
	}
	Expect(c.Create(ctx, svc)).To(Succeed())
	Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: api.Ptr("tcp"), Port: api.Ptr(targetPort), Protocol: api.Ptr(corev1.ProtocolTCP)}},
	}
	Expect(c.Create(ctx, es)).To(Succeed())
	return svc, es
}

// ask connects to addr and returns what the backend said ("" on failure).
func ask(addr string) string {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	b, _ := io.ReadAll(conn)
	return string(b)
}

// askN makes n sequential connections.
func askN(addr string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ask(addr)
	}
	return out
}

var _ = Describe("Service proxy", func() {
	It("forwards a cluster IP port to the ready endpoints round robin", func(ctx SpecContext) {
		ns := namespace(ctx)
		a := startBackend("a", 0)
		port := a.port()
		b := startBackend("b", int(port))
		notReady := startBackend("not-ready", int(port))
		svc, _ := selectorless(ctx, ns, "web", corev1.ServiceTypeClusterIP, port,
			endpoint(a.ip(), api.Ptr(true)), endpoint(b.ip(), nil), endpoint(notReady.ip(), api.Ptr(false)))
		addr := net.JoinHostPort(svc.Spec.ClusterIP, "8080")

		Eventually(func() string { return ask(addr) }).ShouldNot(BeEmpty())
		got := askN(addr, 6)
		counts := map[string]int{}
		for i, g := range got {
			counts[g]++
			if i > 0 {
				Expect(g).NotTo(Equal(got[i-1]), "round robin: %v", got)
			}
		}
		Expect(counts).To(Equal(map[string]int{"a": 3, "b": 3}), "answers %v", got)
	})

	It("follows endpoint changes and skips endpoints that refuse connections", func(ctx SpecContext) {
		ns := namespace(ctx)
		a := startBackend("a", 0)
		port := a.port()
		svc, es := selectorless(ctx, ns, "moving", corev1.ServiceTypeClusterIP, port, endpoint(a.ip(), nil))
		addr := net.JoinHostPort(svc.Spec.ClusterIP, "8080")
		Eventually(func() string { return ask(addr) }).Should(Equal("a"))

		By("replacing the endpoint with a dead one and a live one")
		b := startBackend("b", int(port))
		dead := startBackend("dead", int(port))
		deadIP := dead.ip()
		Expect(dead.ln.Close()).To(Succeed())
		es.Endpoints = []discoveryv1.Endpoint{endpoint(deadIP, nil), endpoint(b.ip(), api.Ptr(true))}
		Expect(c.Update(ctx, es)).To(Succeed())
		Eventually(func() string { return ask(addr) }).Should(Equal("b"))
		Expect(askN(addr, 4)).To(Equal([]string{"b", "b", "b", "b"}))

		By("closing the listener when the service goes away")
		Expect(c.Delete(ctx, svc)).To(Succeed())
		Eventually(func() error {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				_ = conn.Close()
			}
			return err
		}).Should(HaveOccurred())
	})

	It("sends a client IP to the same endpoint with ClientIP session affinity, and round robin again without", func(ctx SpecContext) {
		ns := namespace(ctx)
		a := startBackend("a", 0)
		port := a.port()
		b := startBackend("b", int(port))
		svc, _ := selectorless(ctx, ns, "sticky", corev1.ServiceTypeClusterIP, port, endpoint(a.ip(), nil), endpoint(b.ip(), nil))
		addr := net.JoinHostPort(svc.Spec.ClusterIP, "8080")
		Eventually(func() string { return ask(addr) }).ShouldNot(BeEmpty())

		By("switching to ClientIP affinity: every connection of this client goes to one endpoint")
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		Expect(c.Update(ctx, svc)).To(Succeed())
		Eventually(func() []string {
			got := askN(addr, 6)
			for _, g := range got[1:] {
				if g != got[0] {
					return got
				}
			}
			return nil
		}).Should(BeNil())
		first := ask(addr)
		Expect(askN(addr, 8)).To(HaveEach(first))

		By("switching back to None: round robin")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
		svc.Spec.SessionAffinityConfig = nil
		Expect(c.Update(ctx, svc)).To(Succeed())
		Eventually(func() []string { return askN(addr, 2) }).Should(ConsistOf("a", "b"))
	})

	It("keeps a client on one endpoint through the node port and the cluster IP alike (the Service port's affinity)", func(ctx SpecContext) {
		ns := namespace(ctx)
		a := startBackend("a", 0)
		port := a.port()
		b := startBackend("b", int(port))
		c2 := startBackend("c", int(port))
		svc, _ := selectorless(ctx, ns, "sticky-np", corev1.ServiceTypeNodePort, port, endpoint(a.ip(), nil), endpoint(b.ip(), nil), endpoint(c2.ip(), nil))
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		Expect(c.Update(ctx, svc)).To(Succeed())
		nodePort := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(svc.Spec.Ports[0].NodePort)))
		clusterIP := net.JoinHostPort(svc.Spec.ClusterIP, "8080")
		// The update reached the proxy once the node port sticks.
		var first string
		Eventually(func() []string {
			got := askN(nodePort, 6)
			for _, g := range got {
				if g == "" || g != got[0] {
					return got
				}
			}
			first = got[0]
			return nil
		}).Should(BeNil())
		Expect(askN(nodePort, 16)).To(HaveEach(first))
		Expect(askN(clusterIP, 8)).To(HaveEach(first))
	})

	It("forwards a UDP port's datagrams to an endpoint and its answers back", func(ctx SpecContext) {
		ns := namespace(ctx)
		ip := fmt.Sprintf("127.10.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250))
		pc, err := net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = pc.Close() })
		go func() {
			buf := make([]byte, 1500)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				_, _ = pc.WriteTo([]byte("echo:"+string(buf[:n])), from)
			}
		}()
		port := int32(pc.LocalAddr().(*net.UDPAddr).Port)
		svc := &corev1.Service{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "udp"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tcp", Port: 8080, Protocol: corev1.ProtocolTCP},
				{Name: "udp", Port: 8080, Protocol: corev1.ProtocolUDP}}}}
		Expect(c.Create(ctx, svc)).To(Succeed())
		Expect(c.Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  api.ObjectMeta{Namespace: ns, Name: "udp-1", Labels: map[string]string{discoveryv1.LabelServiceName: "udp"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{endpoint(ip, nil)},
			Ports: []discoveryv1.EndpointPort{{Name: api.Ptr("udp"), Port: api.Ptr(port), Protocol: api.Ptr(corev1.ProtocolUDP)},
				{Name: api.Ptr("tcp"), Port: api.Ptr(port), Protocol: api.Ptr(corev1.ProtocolTCP)}},
		})).To(Succeed())
		conn, err := net.Dial("udp", net.JoinHostPort(svc.Spec.ClusterIP, "8080"))
		Expect(err).NotTo(HaveOccurred())
		defer conn.Close()
		Eventually(func() string {
			_, _ = conn.Write([]byte("hostName"))
			_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			buf := make([]byte, 100)
			n, _ := conn.Read(buf)
			return string(buf[:n])
		}).Should(Equal("echo:hostName"))
	})

	It("forwards node ports", func(ctx SpecContext) {
		ns := namespace(ctx)
		a := startBackend("np", 0)
		svc, _ := selectorless(ctx, ns, "np", corev1.ServiceTypeNodePort, a.port(), endpoint(a.ip(), nil))
		np := svc.Spec.Ports[0].NodePort
		Expect(np).NotTo(BeZero())
		Eventually(func() string { return ask(net.JoinHostPort("127.0.0.1", strconv.Itoa(int(np)))) }).Should(Equal("np"))
		Expect(ask(net.JoinHostPort(svc.Spec.ClusterIP, "8080"))).To(Equal("np"))
	})

	It("proxies long-lived connections in both directions", func(ctx SpecContext) {
		ns := namespace(ctx)
		ip := fmt.Sprintf("127.10.%d.%d", 100+rand.IntN(150), 1+rand.IntN(250))
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		Expect(err).NotTo(HaveOccurred())
		var wg sync.WaitGroup
		DeferCleanup(wg.Wait) // cleanups run last-in first-out: after the Close below
		DeferCleanup(func() { _ = ln.Close() })
		wg.Go(func() { // echo server
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				wg.Go(func() { defer conn.Close(); _, _ = io.Copy(conn, conn) })
			}
		})
		port := int32(ln.Addr().(*net.TCPAddr).Port)
		svc, _ := selectorless(ctx, ns, "echo", corev1.ServiceTypeClusterIP, port, endpoint(ip, nil))
		addr := net.JoinHostPort(svc.Spec.ClusterIP, "8080")
		// The listener may exist a moment before its endpoints are known
		// (Service and EndpointSlice events arrive separately): retry until the
		// first exchange works, then keep that connection.
		var conn net.Conn
		buf := make([]byte, 5)
		Eventually(func() error {
			cn, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return err
			}
			_ = cn.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err = io.WriteString(cn, "hello"); err == nil {
				_, err = io.ReadFull(cn, buf)
			}
			if err != nil || string(buf) != "hello" {
				_ = cn.Close()
				return fmt.Errorf("exchange: %q, %v", buf, err)
			}
			conn = cn
			return nil
		}).Should(Succeed())
		defer conn.Close()
		_, err = io.WriteString(conn, "again")
		Expect(err).NotTo(HaveOccurred())
		_, err = io.ReadFull(conn, buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(buf)).To(Equal("again"))
		Expect(conn.(*net.TCPConn).CloseWrite()).To(Succeed())
		rest, err := io.ReadAll(conn)
		Expect(err).NotTo(HaveOccurred())
		Expect(rest).To(BeEmpty())
	})
})
