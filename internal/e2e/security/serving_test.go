package security

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/controlplane"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/client/rest"
)

// countingProxy forwards TCP connections to target and counts them.
type countingProxy struct {
	ln    net.Listener
	conns atomic.Int32
}

func newCountingProxy(target string) *countingProxy {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p := &countingProxy{ln: ln}
	var wg sync.WaitGroup
	DeferCleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			wg.Go(func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
				_, _ = io.Copy(c, up)
			})
		}
	})
	return p
}

var _ = Describe("Serving HTTP/2", Ordered, func() {
	var (
		cp *controlplane.ControlPlane
		p  *pki.PKI
	)
	const cms = "/api/v1/namespaces/default/configmaps"

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true})
		var err error
		p, err = pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(time.Minute))

	It("negotiates h2 by ALPN and still serves HTTP/1.1 clients", func(ctx SpecContext) {
		admin := newIdentity(p, "h2-admin", "system:masters")
		Expect(call(ctx, admin.http, http.MethodGet, cp.URL()+"/api", nil).code).To(Equal(http.StatusOK), "HTTP/1.1 client")

		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(p.CAPEM())
		pair, err := tls.X509KeyPair(admin.cert, admin.key)
		Expect(err).NotTo(HaveOccurred())
		tr := &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}
		DeferCleanup(tr.CloseIdleConnections)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.URL()+cms, nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := (&http.Client{Transport: tr}).Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.ProtoMajor).To(Equal(2))
		Expect(resp.TLS.NegotiatedProtocol).To(Equal("h2"))
	})

	It("gives framework/client one connection for concurrent requests and watches", func(ctx SpecContext) {
		proxy := newCountingProxy(strings.TrimPrefix(cp.URL(), "https://"))
		cfg := newIdentity(p, "h2-client", "system:masters").config(p, "https://"+proxy.ln.Addr().String())
		c, err := rest.NewClient(cfg)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.CloseIdleConnections)
		_, err = c.Do(ctx, rest.Request{Method: http.MethodGet, Path: cms})
		Expect(err).NotTo(HaveOccurred())

		By("watching ConfigMaps and creating 64 of them concurrently")
		watch, err := c.Stream(ctx, rest.Request{Method: http.MethodGet, Path: cms, Query: map[string][]string{"watch": {"1"}}})
		Expect(err).NotTo(HaveOccurred())
		defer watch.Close()
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Go(func() {
				defer GinkgoRecover()
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h2-%d"},"data":{"k":"v"}}`, i)
				_, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: cms, Body: []byte(body)})
				Expect(err).NotTo(HaveOccurred())
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		sc := bufio.NewScanner(watch)
		for len(seen) < 64 && sc.Scan() {
			var ev struct {
				Type   string
				Object struct{ Metadata struct{ Name string } }
			}
			Expect(json.Unmarshal(sc.Bytes(), &ev)).To(Succeed())
			Expect(ev.Type).To(Equal("ADDED"))
			seen[ev.Object.Metadata.Name] = true
		}
		Expect(seen).To(HaveLen(64), "watch events over the shared connection")
		Expect(proxy.conns.Load()).To(Equal(int32(1)), "connections the client opened")
	})
})
