package apply

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
)

var _ = Describe("managedFields on every write", func() {
	It("records the creator from the User-Agent, in Kubernetes' FieldsV1 encoding", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		r := call(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", jsonType,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"x"}},"data":{"a":"1"}}`,
			"kubectl-create/v1.33.0 (linux/amd64) kubernetes/abcdef")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		// What kube-apiserver records for the same request.
		Expect(entries(r.obj)).To(Equal(`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{}},` +
			`"f:metadata":{"f:labels":{".":{},"f:app":{}}}},"manager":"kubectl-create","operation":"Update"}]`))
	})

	It("keys list items by their merge keys and merges a manager's updates", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		r := call(ctx, http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments?fieldManager=creator", jsonType,
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}]}]}}}}`, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		mf := entries(r.obj)
		Expect(mf).To(ContainSubstring(`"manager":"creator","operation":"Update"`))
		Expect(mf).To(ContainSubstring(`"f:selector":{}`), "a label selector is atomic")
		Expect(mf).To(ContainSubstring(`"k:{\"name\":\"c\"}":{".":{}`))
		Expect(mf).To(ContainSubstring(`"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}`))
		Expect(mf).To(ContainSubstring(`"f:env":{".":{},"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}}`))
		Expect(mf).NotTo(ContainSubstring(`f:status`))

		path := "/apis/apps/v1/namespaces/" + ns + "/deployments/d"
		for _, patch := range []string{`{"spec":{"replicas":2}}`, `{"metadata":{"labels":{"x":"y"}}}`} {
			r = call(ctx, http.MethodPatch, path+"?fieldManager=scaler", mergeType, patch, "")
			Expect(r.code).To(Equal(http.StatusOK), r.raw)
		}
		mf = entries(r.obj)
		Expect(strings.Count(mf, `"manager":"scaler"`)).To(Equal(1), mf)
		Expect(mf).To(ContainSubstring(`{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:x":{}}},"f:spec":{"f:replicas":{}}},"manager":"scaler","operation":"Update"}`))
		Expect(fieldsOf(r.obj, "creator")).NotTo(ContainSubstring(`f:replicas`), "replicas moved to scaler")

		By("a status write records its subresource")
		r = call(ctx, http.MethodPatch, path+"/status?fieldManager=ctrl", mergeType, `{"status":{"observedGeneration":3}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(entries(r.obj)).To(ContainSubstring(`{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:observedGeneration":{}}},"manager":"ctrl","operation":"Update","subresource":"status"}`))

		By("a scale write records its subresource")
		r = call(ctx, http.MethodPatch, path+"/scale?fieldManager=hpa", mergeType, `{"spec":{"replicas":4}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		r = call(ctx, http.MethodGet, path, "", nil, "")
		Expect(entries(r.obj)).To(ContainSubstring(`"fieldsV1":{"f:spec":{"f:replicas":{}}},"manager":"hpa","operation":"Update","subresource":"scale"}`))
	})

	It("lets a client clear managedFields with a list of one empty entry", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		path := "/api/v1/namespaces/" + ns + "/configmaps"
		r := call(ctx, http.MethodPost, path, jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(api.NestedSlice(r.obj, "metadata", "managedFields")).To(HaveLen(1))
		r = call(ctx, http.MethodPatch, path+"/c", mergeType, `{"metadata":{"managedFields":[{}]}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(r.obj["metadata"]).NotTo(HaveKey("managedFields"))
		By("an object without managedFields is not tracked by updates")
		r = call(ctx, http.MethodPatch, path+"/c", mergeType, `{"data":{"b":"2"}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(r.obj["metadata"]).NotTo(HaveKey("managedFields"))
	})

	It("refuses bad fieldManager values as Kubernetes does", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		r := call(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?fieldManager="+strings.Repeat("m", 129), jsonType,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, "")
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)
		Expect(r.raw).To(ContainSubstring("fieldManager"))
		r = call(ctx, http.MethodPatch, fmt.Sprintf("/api/v1/namespaces/%s/configmaps/c?force=true", ns), mergeType, `{}`, "")
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)
		Expect(r.raw).To(ContainSubstring("may not be specified for non-apply patch"))
	})
})
