package security

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
)

var _ = Describe("Admission webhooks with matchPolicy", Ordered, func() {
	var (
		cp    *controlplane.ControlPlane
		admin identity
		url   string
		ca    string
		mu    sync.Mutex
		seen  []string // "requestKind version -> kind version" per call
	)
	const widgets = "/apis/example.com/v2/namespaces/default/widgets"

	BeforeAll(func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp = start(ctx, controlplane.Options{DataDir: dir, Secure: true})
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin = newIdentity(p, "test-admin", "system:masters")

		// One server for both webhooks: /mutate labels the object, /validate
		// refuses spec.size 13. Both look at the object in the version they
		// registered for (v1).
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var in struct {
				Request struct {
					UID         string         `json:"uid"`
					Kind        map[string]any `json:"kind"`
					RequestKind map[string]any `json:"requestKind"`
					Object      map[string]any `json:"object"`
				} `json:"request"`
			}
			b, _ := io.ReadAll(r.Body)
			Expect(json.Unmarshal(b, &in)).To(Succeed())
			mu.Lock()
			seen = append(seen, r.URL.Path+" "+in.Request.RequestKind["version"].(string)+"->"+in.Request.Kind["version"].(string)+" "+in.Request.Object["apiVersion"].(string))
			mu.Unlock()
			resp := map[string]any{"uid": in.Request.UID, "allowed": true}
			spec, _ := in.Request.Object["spec"].(map[string]any)
			switch {
			case r.URL.Path == "/mutate":
				resp["patchType"] = "JSONPatch"
				resp["patch"] = base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels","value":{"seen-as":"` + in.Request.Kind["version"].(string) + `"}}]`))
			case spec["size"] == float64(13):
				resp["allowed"] = false
				resp["status"] = map[string]any{"code": 403, "message": "13 is unlucky"}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
		}))
		DeferCleanup(ts.Close)
		url = ts.URL
		ca = base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))

		version := func(name string, storage bool) map[string]any {
			return map[string]any{"name": name, "served": true, "storage": storage, "schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
		}
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "widgets.example.com"},
			"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
				"names":    map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
				"versions": []any{version("v1", true), version("v2", false)}},
		})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Eventually(func() int {
			return call(ctx, admin.http, http.MethodGet, cp.URL()+widgets, nil).code
		}).WithContext(ctx).Should(Equal(http.StatusOK))
	}, NodeTimeout(time.Minute))

	register := func(ctx SpecContext, kind, name, path, policy string) {
		GinkgoHelper()
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/admissionregistration.k8s.io/v1/"+kind, map[string]any{
			"metadata": map[string]any{"name": name},
			"webhooks": []any{map[string]any{
				"name": name + ".example.com", "clientConfig": map[string]any{"url": url + path, "caBundle": ca},
				"rules": []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{"example.com"},
					"apiVersions": []string{"v1"}, "resources": []string{"widgets"}}},
				"matchPolicy": policy, "sideEffects": "None", "admissionReviewVersions": []string{"v1"},
			}}})
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		DeferCleanup(func(ctx SpecContext) {
			call(ctx, admin.http, http.MethodDelete, cp.URL()+"/apis/admissionregistration.k8s.io/v1/"+kind+"/"+name, nil)
		})
	}
	widget := func(name string, size int) map[string]any {
		return map[string]any{"apiVersion": "example.com/v2", "kind": "Widget", "metadata": map[string]any{"name": name}, "spec": map[string]any{"size": size}}
	}

	It("calls a webhook registered for v1 with a write through v2, converted, by default (Equivalent)", func(ctx SpecContext) {
		register(ctx, "mutatingwebhookconfigurations", "label", "/mutate", "")
		register(ctx, "validatingwebhookconfigurations", "unlucky", "/validate", "")
		var r reply
		Eventually(func() any {
			r = call(ctx, admin.http, http.MethodPost, cp.URL()+widgets, widget("w13", 13))
			return r.code
		}).WithContext(ctx).Should(Equal(http.StatusForbidden), "the webhooks take effect once the configurations reach the cache")
		Expect(r.body["message"]).To(Equal(`admission webhook "unlucky.example.com" denied the request: 13 is unlucky`))

		r = call(ctx, admin.http, http.MethodPost, cp.URL()+widgets, widget("w1", 1))
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
		Expect(r.body["apiVersion"]).To(Equal("example.com/v2"))
		Expect(r.body["metadata"]).To(HaveKeyWithValue("labels", map[string]any{"seen-as": "v1"}))
		mu.Lock()
		defer mu.Unlock()
		Expect(seen).To(ContainElements("/mutate v2->v1 example.com/v1", "/validate v2->v1 example.com/v1"))
	}, SpecTimeout(time.Minute))

	It("does not call it with matchPolicy Exact", func(ctx SpecContext) {
		// The configurations of the previous spec are deleted by its cleanup;
		// wait until the API server's cache has seen that.
		Eventually(func() int {
			return call(ctx, admin.http, http.MethodPost, cp.URL()+widgets, widget(fmt.Sprintf("before-%d", time.Now().UnixNano()), 13)).code
		}).WithContext(ctx).Should(Equal(http.StatusCreated))
		register(ctx, "validatingwebhookconfigurations", "exact", "/validate", "Exact")
		// A probe through v1 shows the configuration is in effect.
		Eventually(func() int {
			o := widget("probe", 13)
			o["apiVersion"] = "example.com/v1"
			return call(ctx, admin.http, http.MethodPost, cp.URL()+"/apis/example.com/v1/namespaces/default/widgets", o).code
		}).WithContext(ctx).Should(Equal(http.StatusForbidden))
		r := call(ctx, admin.http, http.MethodPost, cp.URL()+widgets, widget("exact13", 13))
		Expect(r.code).To(Equal(http.StatusCreated), r.String())
	}, SpecTimeout(time.Minute))
})
