package controlplane_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client/rest"
)

// BenchmarkSecureCreate compares ConfigMap creates at concurrency 64 through
// the default, secure server (HTTPS, client certificates, RBAC, admission)
// with creates through an insecure one and with raw etcd puts (gRPC) of the
// same bytes, all with fsync on, measured in alternating slices like
// BenchmarkInterleavedCreate. The API clients are framework/client's
// transport, which behaves as client-go's (HTTP/2 when the server offers it,
// at most 25 idle HTTP/1.1 connections per host):
//
//   - secure: over HTTP/2 (one connection);
//   - secure-h1: the same server offered only HTTP/1.1 by the client, as
//     every client saw it before the server spoke HTTP/2: above 25 concurrent
//     requests, connections (and their TLS handshakes) are re-made;
//   - insecure: plain HTTP/1.1;
//   - etcd: raw puts on the secure control plane's etcd.
//
// It reports each side's creates/s and process CPU per create, and the ratios
// secure ÷ insecure, secure ÷ etcd and secure-h1 ÷ insecure.
func BenchmarkSecureCreate(b *testing.B) {
	ctx := context.Background()
	secure, err := controlplane.Start(ctx, controlplane.Options{DataDir: b.TempDir(), Secure: true, CompactionInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer secure.Close()
	insecure, err := controlplane.Start(ctx, controlplane.Options{DataDir: b.TempDir(), CompactionInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer insecure.Close()

	var seq atomic.Int64
	payload := strings.Repeat("x", 1000)
	body := func(prefix string) (string, []byte) {
		name := fmt.Sprintf("%s-%d", prefix, seq.Add(1))
		return name, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload)
	}
	const path = "/api/v1/namespaces/default/configmaps"
	restCreate := func(cp *controlplane.ControlPlane) func() error { return restConfigMapCreate(b, cp, body) }
	http1Create := func(cp *controlplane.ControlPlane) func() error {
		cfg, err := cp.ClientConfig("bench-h1")
		if err != nil {
			b.Fatal(err)
		}
		pair, err := tls.X509KeyPair(cfg.TLS.CertData, cfg.TLS.KeyData)
		if err != nil {
			b.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(cfg.TLS.CAData)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ForceAttemptHTTP2, tr.MaxIdleConnsPerHost = false, 25
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}}
		b.Cleanup(tr.CloseIdleConnections)
		hc := &http.Client{Transport: tr}
		return func() error {
			_, data := body("h1")
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, cp.URL()+path, strings.NewReader(string(data)))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				return fmt.Errorf("create: %d", resp.StatusCode)
			}
			return nil
		}
	}
	etcdPut := func() error {
		name, data := body("raw")
		_, err := secure.EtcdClient().Put(ctx, "/bench/raw/"+name, string(data))
		return err
	}
	sides := []benchSide{
		{name: "secure", op: restCreate(secure)},
		{name: "secure-h1", op: http1Create(secure)},
		{name: "insecure", op: restCreate(insecure)},
		{name: "etcd", op: etcdPut},
	}
	const slices, conc = 10, 64
	n := max(b.N/slices, conc)
	for i := range sides { // warm up: connections, watch caches
		run(nil, conc, conc, sides[i].op)
	}
	b.ResetTimer()
	interleave(sides, slices, conc, n)
	total := float64(n * slices)
	for _, s := range sides {
		b.ReportMetric(total/s.wall.Seconds(), s.name+"-ops/s")
		b.ReportMetric(float64(s.cpu.Microseconds())/total, s.name+"-cpu-us/op")
	}
	ratio := func(num, den int) float64 { return sides[den].wall.Seconds() / sides[num].wall.Seconds() }
	b.ReportMetric(ratio(0, 2), "secure/insecure")
	b.ReportMetric(ratio(0, 3), "secure/etcd")
	b.ReportMetric(ratio(1, 2), "secure-h1/insecure")
	b.ReportMetric(ratio(2, 3), "insecure/etcd")
}

// restConfigMapCreate returns an op creating one ConfigMap (its name and body
// from body) in cp's default namespace through framework/client's transport,
// as an admin.
func restConfigMapCreate(b *testing.B, cp *controlplane.ControlPlane, body func(prefix string) (string, []byte)) func() error {
	cfg, err := cp.ClientConfig("bench")
	if err != nil {
		b.Fatal(err)
	}
	c, err := rest.NewClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.CloseIdleConnections)
	return func() error {
		_, data := body("cm")
		_, err := c.Do(context.Background(), rest.Request{Method: http.MethodPost, Path: "/api/v1/namespaces/default/configmaps", Body: data})
		return err
	}
}
