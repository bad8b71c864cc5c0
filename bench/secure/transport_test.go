package secure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/converge-dev/converge/controlplane"
)

// BenchmarkSecureCreateTransport is issue 24's own measurement: ConfigMap
// creates (~1 KB JSON) at concurrency 64 sent through client-go's transport
// built from a kubeconfig-like configuration (rest.TransportFor: HTTP/2 when
// the server offers it, at most 25 idle HTTP/1.1 connections per host
// otherwise), each response body read to its end as client-go reads it,
// against the default secure server and an insecure one, and raw etcd puts of
// the same bytes through etcd's gRPC client into the secure server's embedded
// etcd — fsync on, in ten alternating slices. Unlike
// BenchmarkSecureCreateClientGo it leaves out the typed clientset's protobuf
// encoding and decoding of Go objects, which is the client's cost, not the
// server's. It reports creates/s and process CPU per create of each side and
// the ratios secure ÷ insecure and secure ÷ etcd (the goals: ≥ 0.9 and ≥ 0.6).
func BenchmarkSecureCreateTransport(b *testing.B) {
	secure, insecure := start(b, true, true), start(b, false, true)
	var seq atomic.Int64
	payload := strings.Repeat("x", 1000)
	body := func(name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, payload)
	}
	create := func(cp *controlplane.ControlPlane) func() error {
		rt, err := rest.TransportFor(clientGoConfig(b, cp))
		if err != nil {
			b.Fatal(err)
		}
		hc := &http.Client{Transport: rt}
		url := cp.URL() + "/api/v1/namespaces/default/configmaps"
		return func() error {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url,
				bytes.NewReader(body(fmt.Sprintf("cm-%d", seq.Add(1)))))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				return fmt.Errorf("read create response: %w", err)
			}
			if resp.StatusCode != http.StatusCreated {
				return fmt.Errorf("create: status %d", resp.StatusCode)
			}
			return nil
		}
	}
	put := func() error {
		name := fmt.Sprintf("raw-%d", seq.Add(1))
		_, err := secure.EtcdClient().Put(context.Background(), "/bench/raw/"+name, string(body(name)))
		return err
	}
	compareSecure(b, create(secure), create(insecure), put)
}
