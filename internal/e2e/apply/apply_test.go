package apply

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
)

const deployYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {team: a}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
`

var _ = Describe("server-side apply", func() {
	var ns, path string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		path = "/apis/apps/v1/namespaces/" + ns + "/deployments/web"
	})
	apply := func(ctx SpecContext, manager, body string, extra ...string) response {
		q := "?fieldManager=" + manager
		for _, e := range extra {
			q += "&" + e
		}
		return call(ctx, http.MethodPatch, path+q, applyType, body, "")
	}

	It("creates, then merges by the applier's fields and removes what it stops sending", func(ctx SpecContext) {
		r := apply(ctx, "app", deployYAML)
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(entries(r.obj)).To(ContainSubstring(`"manager":"app","operation":"Apply"`))
		Expect(entries(r.obj)).To(ContainSubstring(`"f:env":{"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}}`))
		rv := api.NestedString(r.obj, "metadata", "resourceVersion")

		By("the same configuration again changes nothing")
		r = apply(ctx, "app", deployYAML)
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedString(r.obj, "metadata", "resourceVersion")).To(Equal(rv))

		By("another manager adds an env var and a label with an update")
		r = call(ctx, http.MethodPatch, path+"?fieldManager=other", smpType,
			`{"metadata":{"labels":{"extra":"x"}},"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"C","value":"3"}]}]}}}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)

		By("dropping env B and label team removes them; C, owned by other, stays")
		r = apply(ctx, "app", strings.Replace(strings.Replace(deployYAML, `, {name: B, value: "2"}`, "", 1), "labels: {team: a}", "labels: {}", 1))
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		env := api.NestedSlice(r.obj, "spec", "template", "spec", "containers")[0].(map[string]any)["env"]
		Expect(env).To(ConsistOf(map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "C", "value": "3"}))
		Expect(api.NestedMap(r.obj, "metadata", "labels")).To(Equal(map[string]any{"extra": "x"}))
	})

	It("reports conflicts with Kubernetes' Status and lets force take the fields", func(ctx SpecContext) {
		r := call(ctx, http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments?fieldManager=kubectl-client-side-apply", yamlType, deployYAML, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		cfg := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 5}\n"
		r = apply(ctx, "ops", cfg)
		Expect(r.code).To(Equal(http.StatusConflict), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("kind", "Status"))
		Expect(r.obj).To(HaveKeyWithValue("reason", "Conflict"))
		Expect(r.obj).To(HaveKeyWithValue("message", `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas`))
		Expect(api.NestedSlice(r.obj, "details", "causes")).To(Equal([]any{map[string]any{
			"reason": "FieldManagerConflict", "message": `conflict with "kubectl-client-side-apply" using apps/v1`, "field": ".spec.replicas"}}))

		By("the same value is no conflict: ownership is shared")
		r = apply(ctx, "ops", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(strings.Count(entries(r.obj), `"f:replicas":{}`)).To(Equal(2))

		By("force takes the field over")
		r = apply(ctx, "ops", cfg, "force=true")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(i64(r.obj, "spec", "replicas")).To(BeEquivalentTo(5))
		Expect(fieldsOf(r.obj, "kubectl-client-side-apply")).NotTo(ContainSubstring("f:replicas"))
		Expect(entries(r.obj)).To(ContainSubstring(`{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"manager":"ops","operation":"Apply"}`))
	})

	It("refuses what Kubernetes refuses", func(ctx SpecContext) {
		r := call(ctx, http.MethodPatch, path, applyType, deployYAML, "")
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("message", ContainSubstring("fieldManager: Required value: is required for apply patch")))
		r = apply(ctx, "x", strings.Replace(deployYAML, "kind: Deployment", "kind: ReplicaSet", 1))
		Expect(r.code).To(Equal(http.StatusBadRequest), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("message", "invalid object type: apps/v1, Kind=ReplicaSet"))
		r = apply(ctx, "x", strings.Replace(deployYAML, "replicas: 2", "replicas: 2\n  bogus: 1", 1))
		Expect(r.code).To(Equal(http.StatusInternalServerError), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("message", ContainSubstring("failed to create typed patch object ("+ns+"/web; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema")))
		r = apply(ctx, "x", strings.Replace(deployYAML, "  name: web", "  name: web\n  managedFields: [{manager: x}]", 1))
		Expect(r.code).To(Equal(http.StatusBadRequest), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("message", "metadata.managedFields must be nil"))
		r = call(ctx, http.MethodPatch, path+"/status?fieldManager=x", applyType, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nstatus: {replicas: 1}\n", "")
		Expect(r.code).To(Equal(http.StatusNotFound), r.raw, "status apply does not create")
	})

	It("refuses duplicate and undeclared fields with fieldValidation=Strict, as Kubernetes words them", func(ctx SpecContext) {
		r := apply(ctx, "x", strings.Replace(deployYAML, "replicas: 2", "replicas: 2\n  replicas: 3", 1), "fieldValidation=Strict")
		Expect(r.code).To(Equal(http.StatusBadRequest), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("message", MatchRegexp(`(?s)strict decoding error: .*line \d+: key "replicas" already set in map`)))
		r = apply(ctx, "x", strings.Replace(deployYAML, "replicas: 2", "replicas: 2\n  bogus: 1", 1), "fieldValidation=Strict")
		Expect(r.code).To(Equal(http.StatusBadRequest), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("message", "strict decoding error: .spec.bogus: field not declared in schema"))
		r = apply(ctx, "x", deployYAML, "fieldValidation=Strict")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
	})

	It("applies status through the status subresource only", func(ctx SpecContext) {
		Expect(apply(ctx, "app", deployYAML).code).To(Equal(http.StatusCreated))
		r := call(ctx, http.MethodPatch, path+"/status?fieldManager=ctrl", applyType,
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 9}\nstatus: {observedGeneration: 1, replicas: 1}\n", "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(i64(r.obj, "status", "replicas")).To(BeEquivalentTo(1))
		Expect(i64(r.obj, "spec", "replicas")).To(BeEquivalentTo(2))
		Expect(entries(r.obj)).To(ContainSubstring(`{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:observedGeneration":{},"f:replicas":{}}},"manager":"ctrl","operation":"Apply","subresource":"status"}`))
		By("status in a main-resource apply is neither written nor owned")
		r = apply(ctx, "app", deployYAML+"status: {replicas: 7}\n")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(i64(r.obj, "status", "replicas")).To(BeEquivalentTo(1))
	})

	It("merges custom resources by their schema's list and map types", func(ctx SpecContext) {
		crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.ssa.converge.dev}
spec:
  group: ssa.converge.dev
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              args: {type: array, items: {type: string}}
              selector: {type: object, x-kubernetes-map-type: atomic, additionalProperties: {type: string}}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, properties: {ready: {type: boolean}}}
`
		r := call(ctx, http.MethodPatch, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.ssa.converge.dev?fieldManager=test", applyType, crd, "")
		Expect(r.code).To(Or(Equal(http.StatusCreated), Equal(http.StatusOK)), r.raw)
		gpath := "/apis/ssa.converge.dev/v1/namespaces/" + ns + "/gadgets/g"
		Eventually(func() int {
			return call(ctx, http.MethodGet, "/apis/ssa.converge.dev/v1/namespaces/"+ns+"/gadgets", "", nil, "").code
		}).WithTimeout(10 * time.Second).Should(Equal(http.StatusOK))
		a := "apiVersion: ssa.converge.dev/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {ports: [{name: http, port: 80}], tags: [t1], args: [a, b], selector: {k: v}, free: {a: {b: 1}}}\n"
		r = call(ctx, http.MethodPatch, gpath+"?fieldManager=a", applyType, a, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(entries(r.obj)).To(ContainSubstring(`"fieldsV1":{"f:spec":{"f:args":{},"f:free":{"f:a":{".":{},"f:b":{}}},"f:ports":{"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{}}},"f:selector":{},"f:tags":{"v:\"t1\"":{}}}},"manager":"a","operation":"Apply"`))
		b := "apiVersion: ssa.converge.dev/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {ports: [{name: grpc, port: 90}], tags: [t2], free: {c: 2}}\n"
		r = call(ctx, http.MethodPatch, gpath+"?fieldManager=b", applyType, b, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedSlice(r.obj, "spec", "ports")).To(HaveLen(2))
		Expect(api.NestedSlice(r.obj, "spec", "tags")).To(ConsistOf("t1", "t2"))
		Expect(api.NestedMap(r.obj, "spec", "free")).To(HaveLen(2))
		By("an atomic list is owned whole: another applier changing it conflicts")
		r = call(ctx, http.MethodPatch, gpath+"?fieldManager=b", applyType, strings.Replace(b, "free: {c: 2}", "free: {c: 2}, args: [c]", 1), "")
		Expect(r.code).To(Equal(http.StatusConflict), r.raw)
		Expect(r.raw).To(ContainSubstring(`"field":".spec.args"`))
		By("a drops its port: only grpc is left")
		r = call(ctx, http.MethodPatch, gpath+"?fieldManager=a", applyType, strings.Replace(a, "ports: [{name: http, port: 80}], ", "", 1), "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedSlice(r.obj, "spec", "ports")).To(Equal([]any{map[string]any{"name": "grpc", "port": int64(90)}}))
	})
})
