package apply

import (
	"bytes"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// structured-merge-diff's Set.ToJSON is what writes every FieldsV1 in
// Kubernetes (the API server keeps its bytes as they are): members in
// PathElement order, which compares numbers as numbers (port 80 before 443),
// not as text. Served FieldsV1 must be exactly what it writes for the same set.
var _ = Describe("FieldsV1 in the order Kubernetes writes it", func() {
	It("orders list keys and set values as structured-merge-diff does", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		path := "/api/v1/namespaces/" + ns + "/services/ordered?fieldManager=apply_test"
		r := call(ctx, http.MethodPatch, path, applyType, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"ordered"},
"spec":{"ports":[{"name":"https","port":443,"protocol":"TCP"},{"name":"http","port":80,"protocol":"TCP"},{"name":"dns","port":53,"protocol":"UDP"},{"name":"alt","port":8080,"protocol":"TCP"}]}}`, "")
		Expect(r.code).To(BeNumerically("<", 300), r.raw)
		pod := "/api/v1/namespaces/" + ns + "/pods/ordered?fieldManager=apply_test"
		r2 := call(ctx, http.MethodPatch, pod, applyType, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ordered","finalizers":["example.com/b","example.com/a"]},
"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":10000},{"containerPort":9},{"containerPort":80,"protocol":"UDP"}]}]}}`, "")
		Expect(r2.code).To(BeNumerically("<", 300), r2.raw)
		for _, raw := range []string{r.raw, r2.raw} {
			for _, e := range servedEntries(raw) {
				set := fieldpath.NewSet()
				Expect(set.FromJSON(bytes.NewReader([]byte(e.fields)))).To(Succeed())
				want, err := set.ToJSON()
				Expect(err).NotTo(HaveOccurred())
				Expect(e.fields).To(Equal(string(want)), "fieldsV1 of %s", e.manager)
			}
		}
	})
})
