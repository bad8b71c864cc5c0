package apply

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
)

var _ = Describe("dryRun=All", func() {
	It("stores nothing on any write verb and answers as if it had", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		base := "/api/v1/namespaces/" + ns + "/configmaps"
		r := call(ctx, http.MethodPost, base, jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"k":"v"}},"data":{"a":"1"}}`, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		rv := api.NestedString(r.obj, "metadata", "resourceVersion")
		unchanged := func() {
			GinkgoHelper()
			got := call(ctx, http.MethodGet, base+"/c", "", nil, "")
			Expect(got.code).To(Equal(http.StatusOK), got.raw)
			Expect(api.NestedString(got.obj, "metadata", "resourceVersion")).To(Equal(rv))
			Expect(api.NestedMap(got.obj, "data")).To(Equal(map[string]any{"a": "1"}))
		}

		By("create")
		r = call(ctx, http.MethodPost, base+"?dryRun=All", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"g-"},"data":{"a":"1"}}`, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		name := api.NestedString(r.obj, "metadata", "name")
		Expect(name).To(HavePrefix("g-"))
		Expect(api.NestedString(r.obj, "metadata", "uid")).NotTo(BeEmpty())
		Expect(api.NestedSlice(r.obj, "metadata", "managedFields")).To(HaveLen(1))
		Expect(call(ctx, http.MethodGet, base+"/"+name, "", nil, "").code).To(Equal(http.StatusNotFound))

		By("create still validates")
		r = call(ctx, http.MethodPost, base+"?dryRun=All", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`, "")
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)

		By("update")
		r = call(ctx, http.MethodPut, base+"/c?dryRun=All", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"2"}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedMap(r.obj, "data")).To(Equal(map[string]any{"a": "2"}))
		unchanged()

		By("patch")
		r = call(ctx, http.MethodPatch, base+"/c?dryRun=All", mergeType, `{"data":{"a":"3"}}`, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedMap(r.obj, "data")).To(Equal(map[string]any{"a": "3"}))
		unchanged()

		By("apply, on an existing and a missing object")
		r = call(ctx, http.MethodPatch, base+"/c?dryRun=All&fieldManager=a&force=true", applyType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '4'}\n", "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedMap(r.obj, "data")).To(Equal(map[string]any{"a": "4"}))
		unchanged()
		r = call(ctx, http.MethodPatch, base+"/new?dryRun=All&fieldManager=a", applyType, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new}\ndata: {a: '4'}\n", "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(call(ctx, http.MethodGet, base+"/new", "", nil, "").code).To(Equal(http.StatusNotFound))

		By("delete")
		r = call(ctx, http.MethodDelete, base+"/c?dryRun=All", "", nil, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		unchanged()

		By("deletecollection")
		r = call(ctx, http.MethodDelete, base+"?dryRun=All", "", nil, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(api.NestedSlice(r.obj, "items")).NotTo(BeEmpty())
		unchanged()
	})

	It("runs admission: a Service's cluster IP is allocated in the answer and not kept", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		svc := func(name string) string {
			return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"ports":[{"port":80}]}}`, name)
		}
		r := call(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/services?dryRun=All", jsonType, svc("s"), "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		ip := api.NestedString(r.obj, "spec", "clusterIP")
		Expect(ip).NotTo(BeEmpty())
		Expect(call(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/services/s", "", nil, "").code).To(Equal(http.StatusNotFound))
		r = call(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/services", jsonType,
			strings.Replace(svc("s2"), `"ports"`, `"clusterIP":"`+ip+`","ports"`, 1), "")
		Expect(r.code).To(Equal(http.StatusCreated), "the dry-run IP was released: %s", r.raw)
	})
})

var _ = Describe("JSON patch limits", func() {
	It("refuses more than 10,000 operations with 413, as Kubernetes does", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		base := "/api/v1/namespaces/" + ns + "/configmaps"
		Expect(call(ctx, http.MethodPost, base, jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`, "").code).To(Equal(http.StatusCreated))
		ops := func(n int) string {
			return "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/a","value":"1"},`, n), ",") + "]"
		}
		r := call(ctx, http.MethodPatch, base+"/c", jsonPatch, ops(10001), "")
		Expect(r.code).To(Equal(http.StatusRequestEntityTooLarge), r.raw)
		Expect(r.obj).To(HaveKeyWithValue("reason", "RequestEntityTooLarge"))
		Expect(r.obj).To(HaveKeyWithValue("message", "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"))
		r = call(ctx, http.MethodPatch, base+"/c", jsonPatch, ops(10000), "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
	})
})
