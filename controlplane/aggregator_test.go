package controlplane_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/internal/e2etool"
)

// wardle is a small aggregated API server (wardle.example.com/v1alpha1,
// namespaced flunders): it trusts only the front-proxy client certificates
// the control plane publishes in kube-system/extension-apiserver-authentication
// and takes the user from the X-Remote-* headers, as servers built on
// k8s.io/apiserver do.
type wardle struct {
	mu       sync.Mutex
	flunders []map[string]any
	users    []string // "method path user groups" of each request, in order
	watches  chan chan map[string]any
}

const wardleGV = "/apis/wardle.example.com/v1alpha1"

func (wd *wardle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cs := r.TLS.PeerCertificates
	if len(cs) == 0 || cs[0].Subject.CommonName != "front-proxy-client" {
		http.Error(w, "not the front proxy", http.StatusUnauthorized)
		return
	}
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "the front proxy passed credentials on", http.StatusBadRequest)
		return
	}
	wd.mu.Lock()
	wd.users = append(wd.users, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Remote-User")+" "+strings.Join(r.Header.Values("X-Remote-Group"), ","))
	wd.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	const list = wardleGV + "/namespaces/default/flunders"
	switch {
	case r.URL.Path == wardleGV:
		_, _ = fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"wardle.example.com/v1alpha1",
			"resources":[{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["create","get","list","watch"]}]}`)
	case r.URL.Path == list && r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		events := make(chan map[string]any, 4)
		wd.watches <- events
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case obj := <-events:
				_ = json.NewEncoder(w).Encode(map[string]any{"type": "ADDED", "object": obj})
				w.(http.Flusher).Flush()
			}
		}
	case strings.HasSuffix(r.URL.Path, "/echo") && r.Header.Get("Upgrade") == "echo":
		// An upgraded connection (as exec's SPDY or WebSocket): echo lines.
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = rw.Flush()
		line, _ := rw.ReadString('\n')
		_, _ = rw.WriteString("echo: " + line)
		_ = rw.Flush()
	case strings.HasPrefix(r.URL.Path, list+"/") && r.Method == http.MethodGet:
		wd.mu.Lock()
		defer wd.mu.Unlock()
		for _, f := range wd.flunders {
			if f["metadata"].(map[string]any)["name"] == strings.TrimPrefix(r.URL.Path, list+"/") {
				_ = json.NewEncoder(w).Encode(f)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	case r.URL.Path == list && r.Method == http.MethodGet:
		wd.mu.Lock()
		defer wd.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "FlunderList", "apiVersion": "wardle.example.com/v1alpha1",
			"metadata": map[string]any{"resourceVersion": "1"}, "items": wd.flunders})
	case r.URL.Path == list && r.Method == http.MethodPost:
		var obj map[string]any
		if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		obj["metadata"].(map[string]any)["annotations"] = map[string]any{"created-by": r.Header.Get("X-Remote-User")}
		wd.mu.Lock()
		wd.flunders = append(wd.flunders, obj)
		wd.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(obj)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
}

// serveWardle serves wd over HTTPS on loopback with a certificate for
// api.wardle.svc, requiring client certificates of clientCAs; it returns the
// port and the caBundle (base64 PEM).
func serveWardle(t *testing.T, wd http.Handler, clientCAs *x509.CertPool) (int, string) {
	t.Helper()
	return serveTLS(t, wd, "api.wardle.svc", clientCAs)
}

// TestAggregator: an APIService naming a Service routes its group version
// to the aggregated server behind it: discovery, list, create and watch
// through the API server, as the requesting user; the APIService turns
// Available, and False with kube-aggregator's reasons (and 503 for
// requests) when the Service is missing or the caBundle wrong.
func TestAggregator(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: dir, Secure: true, NoFsync: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	cfg, err := cp.ClientConfig("aggregator-test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rest.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (*rest.Response, error) {
		return c.Do(ctx, rest.Request{Method: method, Path: path, Body: []byte(body)})
	}

	// What aggregated servers read to trust the front proxy.
	resp, err := do(http.MethodGet, "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", "")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct{ Data map[string]string }
	if err := json.Unmarshal(resp.Body, &cm); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"requestheader-username-headers": `["X-Remote-User"]`,
		"requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		"requestheader-allowed-names": `["front-proxy-client"]`} {
		if cm.Data[k] != want {
			t.Errorf("extension-apiserver-authentication %s = %q, want %q", k, cm.Data[k], want)
		}
	}
	if !strings.Contains(cm.Data["client-ca-file"], "BEGIN CERTIFICATE") {
		t.Errorf("extension-apiserver-authentication has no client-ca-file")
	}
	if _, err := do(http.MethodGet, "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles/extension-apiserver-authentication-reader", ""); err != nil {
		t.Errorf("role extension-apiserver-authentication-reader: %v", err)
	}
	frontProxyCAs := x509.NewCertPool()
	if !frontProxyCAs.AppendCertsFromPEM([]byte(cm.Data["requestheader-client-ca-file"])) {
		t.Fatalf("requestheader-client-ca-file holds no certificate: %q", cm.Data["requestheader-client-ca-file"])
	}

	wd := &wardle{watches: make(chan chan map[string]any, 4)}
	port, ca := serveWardle(t, wd, frontProxyCAs)
	for path, body := range map[string]string{
		"/api/v1/namespaces": `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"wardle"}}`,
	} {
		if _, err := do(http.MethodPost, path, body); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
	for path, body := range map[string]string{
		"/api/v1/namespaces/wardle/services": `{"apiVersion":"v1","kind":"Service","metadata":{"name":"api"},
			"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}`,
		"/apis/discovery.k8s.io/v1/namespaces/wardle/endpointslices": fmt.Sprintf(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
			"metadata":{"name":"api-1","labels":{"kubernetes.io/service-name":"api"}},"addressType":"IPv4",
			"endpoints":[{"addresses":["127.0.0.1"],"conditions":{"ready":true}}],"ports":[{"name":"https","port":%d,"protocol":"TCP"}]}`, port),
		"/apis/apiregistration.k8s.io/v1/apiservices": fmt.Sprintf(`{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService",
			"metadata":{"name":"v1alpha1.wardle.example.com"},"spec":{"group":"wardle.example.com","version":"v1alpha1",
			"service":{"namespace":"wardle","name":"api","port":443},"caBundle":%q,"groupPriorityMinimum":2000,"versionPriority":200}}`, ca),
	} {
		if _, err := do(http.MethodPost, path, body); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
	waitAvailable(t, c, "v1alpha1.wardle.example.com", "True", "Passed")

	// Discovery of the group version, through the proxy.
	resp, err = do(http.MethodGet, wardleGV, "")
	if err != nil || !strings.Contains(string(resp.Body), `"flunders"`) {
		t.Fatalf("GET %s: %v %s", wardleGV, err, body(resp))
	}
	resp, err = do(http.MethodGet, "/apis/wardle.example.com", "")
	if err != nil || !strings.Contains(string(resp.Body), `"preferredVersion":{"groupVersion":"wardle.example.com/v1alpha1"`) {
		t.Fatalf("GET /apis/wardle.example.com: %v %s", err, body(resp))
	}
	// /apis lists the group (legacy and aggregated discovery), after the
	// built-in groups (priority 2000 is below theirs).
	resp, err = do(http.MethodGet, "/apis", "")
	if err != nil || !strings.Contains(string(resp.Body), `{"name":"wardle.example.com","versions":[{"groupVersion":"wardle.example.com/v1alpha1","version":"v1alpha1"}]`) {
		t.Fatalf("GET /apis: %v %s", err, body(resp))
	}
	if i, j := strings.Index(string(resp.Body), `"wardle.example.com"`), strings.Index(string(resp.Body), `"flowcontrol.apiserver.k8s.io"`); i < j {
		t.Errorf("GET /apis: wardle.example.com (priority 2000) before flowcontrol.apiserver.k8s.io: %s", resp.Body)
	}
	resp, err = c.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/apis", Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
	if err != nil || !strings.Contains(string(resp.Body), `{"metadata":{"name":"wardle.example.com"},"versions":[{"version":"v1alpha1","resources":[{"resource":"flunders","responseKind":{"group":"wardle.example.com","version":"v1alpha1","kind":"Flunder"},"scope":"Namespaced"`) {
		t.Fatalf("GET /apis (aggregated discovery): %v %s", err, body(resp))
	}
	// Create and list, as the requesting user.
	const flunders = wardleGV + "/namespaces/default/flunders"
	resp, err = do(http.MethodPost, flunders, `{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{"name":"one"}}`)
	if err != nil || resp.StatusCode != http.StatusCreated || !strings.Contains(string(resp.Body), `"created-by":"aggregator-test"`) {
		t.Fatalf("create flunder: %v %s", err, body(resp))
	}
	resp, err = do(http.MethodGet, flunders, "")
	if err != nil || !strings.Contains(string(resp.Body), `"name":"one"`) {
		t.Fatalf("list flunders: %v %s", err, body(resp))
	}
	// The aggregator's own availability checks (as system:kube-aggregator)
	// may come after the list: the list's request is the last GET of the
	// collection.
	wd.mu.Lock()
	var last string
	for _, u := range wd.users {
		if strings.HasPrefix(u, http.MethodGet+" "+flunders+" ") {
			last = strings.TrimPrefix(u, http.MethodGet+" "+flunders+" ")
		}
	}
	wd.mu.Unlock()
	if last != "aggregator-test system:masters,system:authenticated" {
		t.Errorf("the aggregated server saw user %q, want aggregator-test in system:masters,system:authenticated", last)
	}
	// kubectl finds the resource through discovery and reads it.
	kubectl, err := e2etool.Kubectl("1.33")
	if err != nil {
		t.Fatalf("this test needs the real kubectl: %v", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := pki.WriteKubeconfig(kubeconfig, cp.URL(), "aggregator-test", cfg.TLS.CAData, cfg.TLS.CertData, cfg.TLS.KeyData, ""); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "kubecache"),
		"get", "flunders", "-n", "default", "one", "-o", "jsonpath={.metadata.annotations.created-by}").CombinedOutput()
	if err != nil || string(out) != "aggregator-test" {
		t.Errorf("kubectl get flunders one: %v %s", err, out)
	}
	// A watch streams through the proxy as the server writes events.
	stream, err := c.Stream(ctx, rest.Request{Method: http.MethodGet, Path: flunders, Query: map[string][]string{"watch": {"true"}}})
	if err != nil {
		t.Fatalf("watch flunders: %v", err)
	}
	defer stream.Close()
	events := <-wd.watches
	events <- map[string]any{"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder", "metadata": map[string]any{"name": "two"}}
	line, err := bufio.NewReader(stream).ReadString('\n')
	if err != nil || !strings.Contains(line, `"type":"ADDED"`) || !strings.Contains(line, `"name":"two"`) {
		t.Fatalf("watch event: %v %q", err, line)
	}

	// An upgraded connection goes through too.
	if got := upgradeEcho(t, cp.URL()+flunders+"/one/echo", cfg.TLS.CAData, cfg.TLS.CertData, cfg.TLS.KeyData); got != "echo: hello\n" {
		t.Errorf("upgraded connection answered %q, want the echo", got)
	}

	// The API server itself accepts the front proxy's requests
	// (requestheader authentication): the user is X-Remote-User's when the
	// client certificate is the front-proxy CA's with an allowed name; the
	// headers are ignored from any other client.
	frontProxy, err := pki.LoadCA(filepath.Join(dir, "pki", "front-proxy", pki.CACertFile), filepath.Join(dir, "pki", "front-proxy", pki.CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	proxyCert, proxyKey, err := frontProxy.IssueClientCert("front-proxy-client", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherCert, otherKey, err := frontProxy.IssueClientCert("someone-else", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		cert, key  []byte
		wantCode   int
		wantInBody string
	}{
		{"front proxy", proxyCert, proxyKey, http.StatusCreated, `"username":"alice","groups":["devs","system:authenticated"],"extra":{"scopes":["a/b"]}`},
		{"not an allowed name", otherCert, otherKey, http.StatusUnauthorized, ""},
		{"the control plane's own client", cfg.TLS.CertData, cfg.TLS.KeyData, http.StatusCreated, `"username":"aggregator-test"`},
	} {
		code, got := selfSubjectReview(t, cp.URL(), cfg.TLS.CAData, tc.cert, tc.key, map[string][]string{
			"X-Remote-User": {"alice"}, "X-Remote-Group": {"devs"}, "X-Remote-Extra-Scopes": {"a/b"}})
		if code != tc.wantCode || !strings.Contains(got, tc.wantInBody) {
			t.Errorf("%s: selfsubjectreview answered %d %s, want %d with %s", tc.name, code, got, tc.wantCode, tc.wantInBody)
		}
	}

	// A wrong caBundle: FailedDiscoveryCheck and 503.
	_, otherCA := serveWardle(t, wd, frontProxyCAs)
	putAPIService(t, c, "v1alpha1.wardle.example.com", func(s map[string]any) { s["spec"].(map[string]any)["caBundle"] = otherCA })
	waitAvailable(t, c, "v1alpha1.wardle.example.com", "False", "FailedDiscoveryCheck")
	wantUnavailable(t, c, flunders)

	// A missing Service: ServiceNotFound and 503.
	putAPIService(t, c, "v1alpha1.wardle.example.com", func(s map[string]any) {
		s["spec"].(map[string]any)["caBundle"] = ca
		s["spec"].(map[string]any)["service"].(map[string]any)["name"] = "missing"
	})
	waitAvailable(t, c, "v1alpha1.wardle.example.com", "False", "ServiceNotFound")
	wantUnavailable(t, c, flunders)

	// Back to the right Service: Available again.
	putAPIService(t, c, "v1alpha1.wardle.example.com", func(s map[string]any) {
		s["spec"].(map[string]any)["service"].(map[string]any)["name"] = "api"
	})
	waitAvailable(t, c, "v1alpha1.wardle.example.com", "True", "Passed")
	if _, err := do(http.MethodGet, flunders, ""); err != nil {
		t.Errorf("list flunders after recovery: %v", err)
	}
	// /readyz does not depend on aggregated servers.
	if _, err := do(http.MethodGet, "/readyz", ""); err != nil {
		t.Errorf("/readyz: %v", err)
	}
}

// selfSubjectReview posts a SelfSubjectReview to url with a client
// certificate and headers, and returns the status code and body.
func selfSubjectReview(t *testing.T, url string, caPEM, certPEM, keyPEM []byte, header http.Header) (int, string) {
	t.Helper()
	hc := tlsClient(t, caPEM, certPEM, keyPEM)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tlsClient is an HTTPS client trusting caPEM with a client certificate.
func tlsClient(t *testing.T, caPEM, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// upgradeEcho opens an "echo" upgraded connection at url over HTTP/1.1,
// writes a line and returns the line read back.
func upgradeEcho(t *testing.T, url string, caPEM, certPEM, keyPEM []byte) string {
	t.Helper()
	hc := tlsClient(t, caPEM, certPEM, keyPEM)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upgrade answered %d %s", resp.StatusCode, b)
	}
	conn := resp.Body.(io.ReadWriteCloser)
	if _, err := io.WriteString(conn, "hello\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("read the echo: %v", err)
	}
	return line
}

// waitAvailable waits until APIService name's Available condition has
// status and reason.
func waitAvailable(t *testing.T, c *rest.Client, name, status, reason string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: "/apis/apiregistration.k8s.io/v1/apiservices/" + name})
		if err != nil {
			t.Fatalf("get apiservice %s: %v", name, err)
		}
		var s struct {
			Status struct {
				Conditions []struct{ Type, Status, Reason, Message string }
			}
		}
		if err := json.Unmarshal(resp.Body, &s); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(s.Status.Conditions, func(c struct{ Type, Status, Reason, Message string }) bool { return c.Type == "Available" })
		if i >= 0 {
			cond := s.Status.Conditions[i]
			last = fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
			if cond.Status == status && cond.Reason == reason {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("apiservice %s: Available is %q, want %s %s", name, last, status, reason)
}

// putAPIService updates APIService name with change.
func putAPIService(t *testing.T, c *rest.Client, name string, change func(map[string]any)) {
	t.Helper()
	path := "/apis/apiregistration.k8s.io/v1/apiservices/" + name
	resp, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(resp.Body, &s); err != nil {
		t.Fatal(err)
	}
	change(s)
	b, _ := json.Marshal(s)
	if _, err := c.Do(t.Context(), rest.Request{Method: http.MethodPut, Path: path, Body: b}); err != nil {
		t.Fatalf("update apiservice %s: %v", name, err)
	}
}

// wantUnavailable checks that a request of path answers 503 with a Status.
func wantUnavailable(t *testing.T, c *rest.Client, path string) {
	t.Helper()
	_, err := c.Do(t.Context(), rest.Request{Method: http.MethodGet, Path: path})
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != http.StatusServiceUnavailable {
		t.Errorf("GET %s: %v, want 503", path, err)
	}
}
