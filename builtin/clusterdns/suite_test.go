package clusterdns_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/clusterdns"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestClusterDNS(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "cluster DNS")
}

var (
	env      *testenv.Environment
	c        *client.Client
	addr     string // the server's extra address, 127.0.0.1:PORT
	upstream string // the fake upstream server's address
	nsN      atomic.Int32
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(25 * time.Millisecond)
	var err error
	env, err = testenv.Start(context.WithoutCancel(ctx), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())

	upstream = startUpstream(freeAddr())
	addr = freeAddr()
	startServer(clusterdns.Options{ExtraAddresses: []string{addr}, Upstreams: []string{upstream}})
	Eventually(func() int { return rcode(ask("udp", addr, "kubernetes.default.svc.cluster.local.", dns.TypeA)) }).Should(Equal(dns.RcodeSuccess))
})

// startServer runs a Server until the suite ends.
func startServer(o clusterdns.Options) *clusterdns.Server {
	o.Client, o.Logger = c, logr.Discard()
	if o.RetryInterval == 0 {
		o.RetryInterval = 200 * time.Millisecond
	}
	s, err := clusterdns.New(o)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	DeferCleanup(func() {
		cancel()
		Eventually(done).Should(Receive(BeNil()))
	})
	return s
}

// freeAddr is a 127.0.0.1 port free for both UDP and TCP.
func freeAddr() string {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		a := ln.Addr().String()
		pc, err := net.ListenPacket("udp", a)
		_ = ln.Close()
		if err == nil {
			_ = pc.Close()
			return a
		}
	}
}

// startUpstream runs a fake upstream DNS server on a (UDP and TCP):
// *.example.test A 192.0.2.7, www.example.com A 192.0.2.53, big.example.test
// 100 A records, NXDOMAIN for the rest.
func startUpstream(a string) string {
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		switch {
		case q.Name == "www.example.com." && q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, mustRR("www.example.com. 60 IN A 192.0.2.53"))
		case q.Name == "big.example.test." && q.Qtype == dns.TypeA:
			for i := range 100 {
				m.Answer = append(m.Answer, mustRR(fmt.Sprintf("big.example.test. 60 IN A 192.0.3.%d", i)))
			}
		case dns.IsSubDomain("example.test.", q.Name) && q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, mustRR(q.Name+" 60 IN A 192.0.2.7"))
		default:
			m.Rcode = dns.RcodeNameError
		}
		if _, udp := w.LocalAddr().(*net.UDPAddr); udp {
			size := dns.MinMsgSize
			if o := r.IsEdns0(); o != nil {
				size = int(o.UDPSize())
			}
			m.Truncate(size)
		}
		_ = w.WriteMsg(m)
	})
	for _, network := range []string{"udp", "tcp"} {
		s := &dns.Server{Addr: a, Net: network, Handler: h}
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { _ = s.ListenAndServe() }()
		Eventually(started).Should(BeClosed())
		DeferCleanup(func() { _ = s.Shutdown() })
	}
	return a
}

func mustRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	Expect(err).NotTo(HaveOccurred())
	return rr
}

// ask sends one query (recursion desired, no EDNS0) over network.
func ask(network, server, name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	cl := &dns.Client{Net: network, Timeout: 3 * time.Second}
	resp, _, err := cl.Exchange(m, server)
	if err != nil {
		GinkgoWriter.Printf("query %s %s over %s: %v\n", name, dns.TypeToString[qtype], network, err)
		return nil
	}
	return resp
}

func rcode(m *dns.Msg) int {
	if m == nil {
		return -1
	}
	return m.Rcode
}

// answers renders the answer section's data ("A 10.0.0.1", "SRV 0 100 80 x.").
func answers(m *dns.Msg) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, rr := range m.Answer {
		h := rr.Header()
		out = append(out, dns.TypeToString[h.Rrtype]+" "+rr.String()[len(h.String()):])
	}
	return out
}

func namespace(ctx context.Context) string {
	name := fmt.Sprintf("dns-%d", nsN.Add(1))
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func writeFile(dir, name, data string) string {
	p := filepath.Join(dir, name)
	Expect(os.WriteFile(p, []byte(data), 0o644)).To(Succeed())
	return p
}

// randomLoopback is a random address of 127.53.0.0/16.
func randomLoopback() string {
	return fmt.Sprintf("127.53.%d.%d", rand.IntN(256), 1+rand.IntN(254))
}
