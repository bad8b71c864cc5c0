package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// benchConfigMap is shaped like core/v1 ConfigMap.
type benchConfigMap struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Immutable      *bool             `json:"immutable,omitempty"`
	Data           map[string]string `json:"data,omitempty"`
	BinaryData     map[string][]byte `json:"binaryData,omitempty"`
}

// BenchmarkCreateHandler measures the API server's CPU and allocations per
// create (POST of a ~600 B ConfigMap-like object as JSON), storage in memory:
// the part of controlplane's BenchmarkCreate that is the handler's own.
func BenchmarkCreateHandler(b *testing.B) {
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		ListKind: "ConfigMapList", Singular: "configmap", Namespaced: true,
		Strategy: registry.Typed[benchConfigMap]{Validate: func(cm *benchConfigMap) field.ErrorList { return nil }},
	})
	payload := strings.Repeat("x", 512)
	benchCreate(b, reg, "/api/v1/namespaces/default/configmaps", func(i int) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"k":%q}}`, i, payload)
	})
}

// benchCreate measures POSTs to path of the JSON bodies body(i) through a
// server of reg's resources, storage in memory.
func benchCreate(b *testing.B, reg *registry.Registry, path string, body func(i int) []byte) {
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start(b.Context())
	h := srv.Handler()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body(i)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkUpdateHandler measures a PUT that changes one value of a ~600 B
// ConfigMap-like object, storage in memory: tracked, the object has
// managedFields (it was created through the API) and every update records its
// manager; untracked, its managedFields were cleared, which Kubernetes (and
// Converge) then leave off, so the difference is the bookkeeping's cost.
func BenchmarkUpdateHandler(b *testing.B) {
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		ListKind: "ConfigMapList", Singular: "configmap", Namespaced: true,
		Strategy: registry.Typed[benchConfigMap]{Validate: func(cm *benchConfigMap) field.ErrorList { return nil }},
	})
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start(b.Context())
	h := srv.Handler()
	do := func(method, path, ctype, body string, want int) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	payload := strings.Repeat("x", 512)
	runs := 0
	for _, tc := range []struct {
		name  string
		reset bool
	}{{"tracked", false}, {"untracked", true}} {
		b.Run(tc.name, func(b *testing.B) {
			runs++
			name := fmt.Sprintf("%s-%d", tc.name, runs)
			path := "/api/v1/namespaces/default/configmaps"
			do(http.MethodPost, path, "application/json", fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"x"}},"data":{"k":%q,"n":"0"}}`, name, payload), http.StatusCreated)
			if tc.reset {
				do(http.MethodPatch, path+"/"+name, "application/merge-patch+json", `{"metadata":{"managedFields":[{}]}}`, http.StatusOK)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				do(http.MethodPut, path+"/"+name+"?fieldManager=bench", "application/json",
					fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"x"}},"data":{"k":%q,"n":"%d"}}`, name, payload, i+1), http.StatusOK)
			}
		})
	}
}

// BenchmarkCreatePodHandler is BenchmarkCreateHandler for a built-in Pod
// (~1 KB, two containers), whose strategy defaults much of the object.
func BenchmarkCreatePodHandler(b *testing.B) {
	reg := registry.New()
	for _, r := range corev1.Resources() {
		if r.Kind == "Pod" {
			reg.Add(r)
		}
	}
	benchCreate(b, reg, "/api/v1/namespaces/default/pods", func(i int) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%d","labels":{"app":"web","tier":"frontend"},"annotations":{"note":"bench"}},`+
			`"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"name":"http"}],"env":[{"name":"MODE","value":"prod"}],`+
			`"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"500m","memory":"128Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":80},"periodSeconds":5}},`+
			`{"name":"sidecar","image":"busybox:1.36","command":["sh","-c","sleep 3600"],"volumeMounts":[{"name":"data","mountPath":"/data"}]}],`+
			`"volumes":[{"name":"data","emptyDir":{}}],"nodeSelector":{"kubernetes.io/os":"linux"}}}`, i)
	})
}
