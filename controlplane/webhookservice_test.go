package controlplane_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/framework/client/rest"
)

// TestWebhookThroughService: a validating webhook named by a Service
// reference is called through that Service's endpoint (the API server
// resolves NAME.NAMESPACE.svc itself, from its watch cache), its certificate
// verified for the Service's name with the caBundle, and refuses the request.
func TestWebhookThroughService(t *testing.T) {
	ctx := t.Context()
	c := startWithClient(t, "webhook-service-test")

	calls := make(chan string, 16)
	port, ca := serveHook(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in review.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		calls <- r.URL.Path + "?" + r.URL.RawQuery
		allowed := in.Request.Name != "forbidden"
		_ = json.NewEncoder(w).Encode(review.AdmissionReview{APIVersion: in.APIVersion, Kind: in.Kind,
			Response: &review.AdmissionResponse{UID: in.Request.UID, Allowed: allowed, Result: &api.Status{Message: "not this one"}}})
	}))

	post := func(path, body string) error {
		_, err := c.Do(ctx, rest.Request{Method: http.MethodPost, Path: path, Body: []byte(body)})
		return err
	}
	hookService(t, c, port)
	for path, body := range map[string]string{
		"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations": fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1",
			"kind":"ValidatingWebhookConfiguration","metadata":{"name":"deny-forbidden"},"webhooks":[{"name":"deny.example.com",
			"clientConfig":{"service":{"namespace":"default","name":"hook","path":"/deny","port":443},"caBundle":%q},
			"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
			"sideEffects":"None","admissionReviewVersions":["v1"],"timeoutSeconds":5}]}`, ca),
	} {
		if err := post(path, body); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
	// The webhook configuration reaches the watch cache a moment later.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		err := post("/api/v1/namespaces/default/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"forbidden"}}`)
		if err != nil && strings.Contains(err.Error(), `admission webhook "deny.example.com" denied the request: not this one`) {
			break
		}
		if err == nil {
			_, _ = c.Do(ctx, rest.Request{Method: http.MethodDelete, Path: "/api/v1/namespaces/default/configmaps/forbidden"})
		}
		if time.Now().After(deadline) {
			t.Fatalf("create of configmap forbidden: %v, want the webhook's refusal", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := <-calls; got != "/deny?timeout=5s" {
		t.Errorf("webhook called at %q, want /deny?timeout=5s", got)
	}
	if err := post("/api/v1/namespaces/default/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"allowed"}}`); err != nil {
		t.Errorf("create of configmap allowed: %v", err)
	}
}

// serveHook serves h over HTTPS on loopback with a certificate for
// hook.default.svc only; it returns the port and the CA bundle (base64 of
// the PEM, as a configuration's caBundle).
func serveHook(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	return serveTLS(t, h, "hook.default.svc", nil)
}

// serveTLS serves h over HTTPS on loopback with a self-signed certificate for
// name only, requiring client certificates of clientCAs when set; it returns
// the port and the CA bundle (base64 of the PEM).
func serveTLS(t *testing.T, h http.Handler, name string, clientCAs *x509.CertPool) (int, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	if clientCAs != nil {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, clientCAs
	}
	srv := &http.Server{Handler: h, TLSConfig: cfg}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port, base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// hookService writes Service default/hook (port 443 "https", no selector)
// and, by hand, its EndpointSlice: 127.0.0.1:port, ready.
func hookService(t *testing.T, c *rest.Client, port int) {
	t.Helper()
	for path, body := range map[string]string{
		"/api/v1/namespaces/default/services": `{"apiVersion":"v1","kind":"Service","metadata":{"name":"hook"},
			"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}`,
		"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices": fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
			"metadata":{"name":"hook-1","labels":{"kubernetes.io/service-name":"hook"}},"addressType":"IPv4",
			"endpoints":[{"addresses":["127.0.0.1"],"conditions":{"ready":true}}],"ports":[{"name":"https","port":%d,"protocol":"TCP"}]}`, port),
	} {
		if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodPost, Path: path, Body: []byte(body)}); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
}

// startWithClient starts a control plane (insecure, in a temporary data dir)
// and returns a client of it named user.
func startWithClient(t *testing.T, user string) *rest.Client {
	t.Helper()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{DataDir: t.TempDir(), NoFsync: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	cfg, err := cp.ClientConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rest.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
