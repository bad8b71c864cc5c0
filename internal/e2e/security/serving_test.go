package security

import (
	"bufio"
	"context"
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

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
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

var _ = Describe("Serving: HTTP/2, /metrics and /debug/pprof", Ordered, func() {
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

		pair, err := tls.X509KeyPair(admin.cert, admin.key)
		Expect(err).NotTo(HaveOccurred())
		tr := &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: caPool(p), Certificates: []tls.Certificate{pair}}}
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

	It("serves /metrics with Kubernetes' names and labels to cluster-admin and system:monitoring only", func(ctx SpecContext) {
		admin := newIdentity(p, "metrics-admin", "system:masters")
		wh := newHoldingWebhook()
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", map[string]any{
			"metadata": map[string]any{"name": "observed"},
			"webhooks": []any{map[string]any{
				"name": "observed.converge.dev", "clientConfig": map[string]any{"url": wh.url, "caBundle": wh.ca},
				"rules":       []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}},
				"sideEffects": "None", "admissionReviewVersions": []string{"v1"},
			}}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Eventually(func() int32 {
			call(ctx, admin.http, http.MethodPost, cp.URL()+cms, configMap(fmt.Sprintf("probe-%d", time.Now().UnixNano()), map[string]any{"probe": "yes"}))
			return wh.probes.Load()
		}).WithContext(ctx).Should(BeNumerically(">", 0))

		By("holding a watch open while scraping")
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req, err := http.NewRequestWithContext(wctx, http.MethodGet, cp.URL()+cms+"?watch=1", nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := admin.http.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))

		m := call(ctx, admin.http, http.MethodGet, cp.URL()+"/metrics", nil)
		Expect(m.code).To(Equal(http.StatusOK), m.String())
		Expect(m.header.Get("Content-Type")).To(HavePrefix("text/plain"))
		for _, series := range []string{
			`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="POST",version="v1"} `,
			`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} `,
			`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="POST",version="v1",le="0.005"} `,
			`apiserver_current_inflight_requests{request_kind="mutating"} `,
			`apiserver_current_inflight_requests{request_kind="readOnly"} 1`, // the scrape itself
			`apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"} 1`,
			`apiserver_storage_objects{resource="configmaps"} `,
			`apiserver_storage_objects{resource="validatingwebhookconfigurations.admissionregistration.k8s.io"} 1`,
			`apiserver_watch_events_total{group="",resource="configmaps",version="v1"} `,
			`etcd_request_duration_seconds_bucket{operation="create",type="configmaps",le="0.005"} `,
			`apiserver_admission_step_admission_duration_seconds_bucket{operation="CREATE",rejected="false",type="validate",le="0.005"} `,
			`apiserver_admission_webhook_admission_duration_seconds_bucket{name="observed.converge.dev",operation="CREATE",rejected="false",type="validate",le="0.005"} `,
			`go_goroutines `,
		} {
			Expect(m.raw).To(ContainSubstring(series))
		}

		By("an unprivileged user is refused, a member of system:monitoring served")
		nobody := newIdentity(p, "nobody")
		r = call(ctx, nobody.http, http.MethodGet, cp.URL()+"/metrics", nil)
		Expect(r.code).To(Equal(http.StatusForbidden), r.String())
		Expect(r.body["message"]).To(Equal(`forbidden: User "nobody" cannot get path "/metrics"`))
		Expect(call(ctx, nobody.http, http.MethodGet, cp.URL()+"/debug/pprof/", nil).code).To(Equal(http.StatusForbidden))
		monitor := newIdentity(p, "prometheus", "system:monitoring")
		Expect(call(ctx, monitor.http, http.MethodGet, cp.URL()+"/metrics", nil).code).To(Equal(http.StatusOK))
		Expect(call(ctx, monitor.http, http.MethodGet, cp.URL()+"/readyz/ping", nil).code).To(Equal(http.StatusOK))
		Expect(call(ctx, monitor.http, http.MethodGet, cp.URL()+"/debug/pprof/", nil).code).To(Equal(http.StatusForbidden), "profiles are cluster-admin's")
		anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: caPool(p)}}}
		Expect(call(ctx, anonymous, http.MethodGet, cp.URL()+"/metrics", nil).code).To(Equal(http.StatusUnauthorized))
	})

	It("serves /debug/pprof to cluster-admin", func(ctx SpecContext) {
		admin := newIdentity(p, "pprof-admin", "system:masters")
		r := call(ctx, admin.http, http.MethodGet, cp.URL()+"/debug/pprof/", nil)
		Expect(r.code).To(Equal(http.StatusOK))
		Expect(r.raw).To(ContainSubstring("goroutine"))
		r = call(ctx, admin.http, http.MethodGet, cp.URL()+"/debug/pprof/heap?debug=1", nil)
		Expect(r.code).To(Equal(http.StatusOK))
		Expect(r.raw).To(ContainSubstring("heap profile"))
		r = call(ctx, admin.http, http.MethodGet, cp.URL()+"/debug/pprof/profile?seconds=1", nil)
		Expect(r.code).To(Equal(http.StatusOK))
		Expect(r.header.Get("Content-Type")).To(Equal("application/octet-stream"))
	})
})

func caPool(p *pki.PKI) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAPEM())
	return pool
}
