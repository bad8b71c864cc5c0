package filters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTokenCSV(t *testing.T) {
	t.Parallel()
	st, err := ParseTokenCSV(strings.NewReader("# comment\nt1,alice,1\nt2,bob,2,\"g1,g2\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	u, ok, _ := st.AuthenticateToken(context.Background(), "t2")
	if !ok {
		t.Fatal("t2 not accepted")
	}
	if diff := cmp.Diff(&User{Name: "bob", UID: "2", Groups: []string{"g1", "g2"}}, u); diff != "" {
		t.Errorf("user (-want +got):\n%s", diff)
	}
	if _, ok, _ := st.AuthenticateToken(context.Background(), "nope"); ok {
		t.Error("unknown token accepted")
	}
	for _, bad := range []string{"t1,alice\n", "t1,a,1\nt1,b,2\n"} {
		if _, err := ParseTokenCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}

func TestRequestInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, url string
		want        RequestInfo
	}{
		{"GET", "/api/v1/namespaces/default/pods", RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Namespace: "default", Resource: "pods"}},
		{"GET", "/api/v1/namespaces/default/pods?watch=true", RequestInfo{IsResourceRequest: true, Verb: "watch", APIVersion: "v1", Namespace: "default", Resource: "pods"}},
		{"GET", "/api/v1/namespaces/default/pods/p/log", RequestInfo{IsResourceRequest: true, Verb: "get", APIVersion: "v1", Namespace: "default", Resource: "pods", Name: "p", Subresource: "log"}},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", RequestInfo{IsResourceRequest: true, Verb: "deletecollection", APIGroup: "apps", APIVersion: "v1", Namespace: "ns", Resource: "deployments"}},
		{"PUT", "/api/v1/namespaces/ns/finalize", RequestInfo{IsResourceRequest: true, Verb: "update", APIVersion: "v1", Namespace: "ns", Resource: "namespaces", Name: "ns", Subresource: "finalize"}},
		{"GET", "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3Dextension-apiserver-authentication&watch=true",
			RequestInfo{IsResourceRequest: true, Verb: "watch", APIVersion: "v1", Namespace: "kube-system", Resource: "configmaps", Name: "extension-apiserver-authentication"}},
		{"GET", "/api/v1/configmaps?fieldSelector=status.phase%3DRunning,metadata.name%3D%3Dx", RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Resource: "configmaps", Name: "x"}},
		{"GET", "/api/v1/configmaps?fieldSelector=metadata.name!%3Dx", RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Resource: "configmaps"}},
		{"GET", "/api/v1/configmaps?fieldSelector=metadata.name%3D..", RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Resource: "configmaps"}},
		{"GET", "/apis/apps/v1", RequestInfo{Verb: "get"}},
		{"POST", "/healthz", RequestInfo{Verb: "post"}},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.url, nil)
		got := NewRequestInfo(r)
		tt.want.Path = r.URL.Path
		if diff := cmp.Diff(&tt.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.url, diff)
		}
	}
}

func TestForbiddenMessages(t *testing.T) {
	t.Parallel()
	u := &User{Name: "x"}
	tests := []struct {
		a    Attributes
		want string
	}{
		{Attributes{User: u, Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "default"},
			`pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "default"`},
		{Attributes{User: u, Verb: "get", ResourceRequest: true, APIGroup: "apps", Resource: "deployments", Subresource: "scale", Name: "d", Namespace: "ns"},
			`deployments.apps "d" is forbidden: User "x" cannot get resource "deployments/scale" in API group "apps" in the namespace "ns"`},
		{Attributes{User: u, Verb: "list", ResourceRequest: true, Resource: "nodes"},
			`nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope`},
		{Attributes{User: u, Verb: "get", Path: "/metrics"}, `forbidden: User "x" cannot get path "/metrics"`},
	}
	for _, tt := range tests {
		if got := Forbidden(tt.a, "").Error(); got != tt.want {
			t.Errorf("got %q\nwant %q", got, tt.want)
		}
	}
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := WithRequestInfoFilter(WithMaxInFlight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), MaxInFlightOptions{Mutating: 1, ReadOnly: 1}))
	var wg sync.WaitGroup
	for _, m := range []string{http.MethodPost, http.MethodGet} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/api/v1/namespaces/d/pods", nil))
		}()
		<-entered
	}
	for _, m := range []string{http.MethodPost, http.MethodGet} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, "/api/v1/namespaces/d/pods", nil))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("%s: code %d, Retry-After %q", m, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
	// Watches and system:masters are not limited.
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods?watch=true", nil))
	}()
	<-entered
	r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/d/pods", nil)
	r = r.WithContext(WithUser(r.Context(), &User{Name: "admin", Groups: []string{GroupMasters}}))
	go h.ServeHTTP(httptest.NewRecorder(), r)
	<-entered
	close(release)
	wg.Wait()
}

func TestAuditLogRotatesAndPolicyClampsSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	log := &AuditLog{Path: path, MaxBytes: 2048, MaxBackups: 2}
	defer log.Close()
	policy := &AuditPolicy{Rules: []AuditPolicyRule{{Level: LevelRequestResponse}}}
	h := WithRequestInfoFilter(WithAudit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","data":{"k":"c2VjcmV0"}}`))
	}), AuditOptions{Policy: policy, Sink: log}))
	for range 40 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/d/secrets", strings.NewReader(`{"data":{"k":"c2VjcmV0"}}`)))
	}
	for _, f := range []string{path, path + ".1", path + ".2"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.Contains(string(b), "c2VjcmV0") || !strings.Contains(string(b), `"level":"Metadata"`) {
			t.Errorf("%s: secret bodies must not be logged above Metadata:\n%s", f, b)
		}
		if len(b) > 2048 {
			t.Errorf("%s: %d bytes, want <= 2048", f, len(b))
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("more backups than MaxBackups")
	}
}

func TestAuditPolicyLevels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  users: ["alice"]
  resources:
  - group: ""
    resources: ["pods", "pods/log"]
- level: Metadata
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadAuditPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	alice := &User{Name: "alice"}
	ri := func(m, u string) *RequestInfo { return NewRequestInfo(httptest.NewRequest(m, u, nil)) }
	for _, tt := range []struct {
		u    *User
		ri   *RequestInfo
		want Level
	}{
		{alice, ri("GET", "/healthz/ping"), LevelNone},
		{alice, ri("GET", "/api/v1/namespaces/d/pods/p/log"), LevelRequestResponse},
		{alice, ri("GET", "/api/v1/namespaces/d/services"), LevelMetadata},
		{&User{Name: "bob"}, ri("GET", "/api/v1/namespaces/d/pods"), LevelMetadata},
	} {
		if got := p.LevelFor(tt.u, tt.ri); got != tt.want {
			t.Errorf("%s %s: got %s, want %s", tt.u.Name, tt.ri.Path, got, tt.want)
		}
	}
}
