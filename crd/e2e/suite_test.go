package e2e_test

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/testenv"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "CRD registry")
}

var (
	env  *testenv.Environment
	cl   *client
	crds = map[string]crdInfo{}
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(context.Background(), testenv.Options{Logger: GinkgoLogr})
	Expect(err).NotTo(HaveOccurred())
	cl = &client{base: env.URL, hc: &http.Client{Timeout: 30 * time.Second}}
	for _, ns := range []string{"argocd", "development"} {
		r, err := cl.do(ctx, http.MethodPost, "/api/v1/namespaces", map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
	}
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func crdFiles() []string {
	files, err := filepath.Glob(filepath.Join(corpus, "crds", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	sort.Strings(files)
	return files
}

func getCRD(ctx context.Context, name string) map[string]any {
	r, err := cl.do(ctx, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.code).To(Equal(http.StatusOK), r.raw)
	return r.obj
}

func create(ctx context.Context, obj map[string]any) response {
	r, err := cl.do(ctx, http.MethodPost, resourcePath(crds, obj), obj, nil)
	Expect(err).NotTo(HaveOccurred())
	return r
}

var _ = Describe("CRD registry", Ordered, func() {
	It("answers a watch from a resourceVersion older than the first watch of the resource with the changes since", func(ctx SpecContext) {
		// The resourceVersion of a create, another change, then the first
		// watch of the resource: the watch cache must reach back to that
		// version (kube-apiserver's runs from the start), not begin at the
		// first watch and answer 410 Gone.
		crdCreate := func(plural string) string {
			r, err := cl.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": plural + ".watch.example.com"},
				"spec": map[string]any{"group": "watch.example.com", "scope": "Namespaced",
					"names": map[string]any{"plural": plural, "kind": strings.ToUpper(plural[:1]) + plural[1:len(plural)-1]},
					"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.code).To(Equal(http.StatusCreated), r.raw)
			return api.NestedString(r.obj, "metadata", "resourceVersion")
		}
		rv := crdCreate("alphas")
		crdCreate("betas")
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events := watchLines(wctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&resourceVersion="+rv)
		// The first CRD's status changes (Established) and the second CRD.
		Eventually(func(g Gomega) {
			var ev map[string]any
			g.Expect(events).To(Receive(&ev))
			g.Expect(ev["type"]).To(Equal("ADDED"), "%v", ev)
			g.Expect(api.NestedString(ev, "object", "metadata", "name")).To(Equal("betas.watch.example.com"))
		}).WithTimeout(5 * time.Second).Should(Succeed())
	})

	It("serves a default added to the schema on objects stored before it (get and list)", func(ctx SpecContext) {
		crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets.defaults.example.com"},
			"spec": map[string]any{"group": "defaults.example.com", "scope": "Cluster",
				"names": map[string]any{"plural": "gadgets", "kind": "Gadget"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
						"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}}}}}}}}
		r, err := cl.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		const path = "/apis/defaults.example.com/v1/gadgets"
		Eventually(func() int {
			r, _ := cl.do(ctx, http.MethodPost, path, map[string]any{"apiVersion": "defaults.example.com/v1", "kind": "Gadget",
				"metadata": map[string]any{"name": "old"}}, nil)
			return r.code
		}).Should(Equal(http.StatusCreated))
		r, err = cl.do(ctx, http.MethodPatch, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.defaults.example.com",
			[]any{map[string]any{"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/a/default", "value": "A"}},
			map[string]string{"Content-Type": "application/json-patch+json"})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Eventually(func(g Gomega) {
			r, err := cl.do(ctx, http.MethodGet, path+"/old", nil, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.obj["a"]).To(Equal("A"), r.raw)
			g.Expect(r.obj).NotTo(HaveKey("b"))
			r, err = cl.do(ctx, http.MethodGet, path+"?resourceVersion=0", nil, nil)
			g.Expect(err).NotTo(HaveOccurred())
			items := api.NestedSlice(r.obj, "items")
			g.Expect(items).To(HaveLen(1))
			g.Expect(items[0].(map[string]any)["a"]).To(Equal("A"))
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("registers every CRD of the corpus and establishes it within a second", func(ctx SpecContext) {
		for _, f := range crdFiles() {
			obj := readDoc(filepath.Join("crds", filepath.Base(f)))
			name := api.NestedString(obj, "metadata", "name")
			r, err := cl.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.code).To(Equal(http.StatusCreated), "%s: %s", name, r.raw)
			Expect(api.NestedSlice(r.obj, "metadata", "finalizers")).To(ContainElement("customresourcecleanup.apiextensions.k8s.io"))
			Expect(api.NestedSlice(r.obj, "status", "storedVersions")).To(HaveLen(1))
			Eventually(func(g Gomega) {
				o := getCRD(ctx, name)
				g.Expect(conditionStatus(o, "NamesAccepted")).To(Equal("True"))
				g.Expect(conditionStatus(o, "Established")).To(Equal("True"))
				g.Expect(api.NestedString(o, "status", "acceptedNames", "plural")).NotTo(BeEmpty())
			}).WithTimeout(time.Second).WithPolling(20*time.Millisecond).Should(Succeed(), name)
			crds[api.NestedString(obj, "spec", "group")+"/"+api.NestedString(obj, "spec", "names", "kind")] = crdInfo{
				group: api.NestedString(obj, "spec", "group"), plural: api.NestedString(obj, "spec", "names", "plural"),
				kind: api.NestedString(obj, "spec", "names", "kind"), namespaced: api.NestedString(obj, "spec", "scope") == "Namespaced",
			}
		}
		Expect(crds).To(HaveLen(12))
	})

	It("serves the CRDs in discovery", func(ctx SpecContext) {
		r, err := cl.do(ctx, http.MethodGet, "/apis/argoproj.io/v1alpha1", nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK))
		Expect(r.raw).To(ContainSubstring(`"workflows"`))
		Expect(r.raw).To(ContainSubstring(`"appprojects"`))
	})

	It("refuses invalid CRDs with field errors", func(ctx SpecContext) {
		obj := readDoc("crds/samplecontroller.k8s.io_foos.yaml")
		api.SetNestedField(obj, "bars.samplecontroller.k8s.io", "metadata", "name")
		r, err := cl.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity))
		Expect(r.message()).To(ContainSubstring(`metadata.name: Invalid value: "bars.samplecontroller.k8s.io": must be spec.names.plural+"."+spec.group`))

		obj = readDoc("crds/samplecontroller.k8s.io_foos.yaml")
		api.SetNestedField(obj, "bars.samplecontroller.k8s.io", "metadata", "name")
		api.SetNestedField(obj, "bars", "spec", "names", "plural")
		api.SetNestedField(obj, "Bar", "spec", "names", "kind")
		vs := api.NestedSlice(obj, "spec", "versions")
		v0 := vs[0].(map[string]any)
		v0["storage"] = false
		api.SetNestedField(v0, map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{}}}, "schema", "openAPIV3Schema")
		r, err = cl.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity))
		Expect(r.message()).To(ContainSubstring(`spec.versions: Invalid value: "[v1alpha1]": must have exactly one version marked as storage version`))
		Expect(r.message()).To(ContainSubstring(`spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`))
	})

	It("accepts every CR of the corpus in order", func(ctx SpecContext) {
		order := []string{"appprojects", "clusterresourceusages", "dnsendpoints", "etcds", "foos", "prometheusrules",
			"publications", "referencegrants", "scheduledbackups", "shirts", "stages", "workflows"}
		for _, dir := range order {
			files, err := filepath.Glob(filepath.Join(corpus, "crs", dir, "*.yaml"))
			Expect(err).NotTo(HaveOccurred())
			sort.Strings(files)
			for i, f := range files {
				docs, err := readDocs(f)
				Expect(err).NotTo(HaveOccurred())
				for _, d := range docs {
					r := create(ctx, d)
					if dir == "dnsendpoints" && i == 1 {
						Expect(r.code).To(Equal(http.StatusConflict), "%s: %s", f, r.raw)
						Expect(r.obj["reason"]).To(Equal("AlreadyExists"))
						continue
					}
					Expect(r.code).To(Equal(http.StatusCreated), "%s: %s", f, r.raw)
				}
			}
		}
	})

	It("defaults fields of the schema", func(ctx SpecContext) {
		r, err := cl.do(ctx, http.MethodGet, "/apis/postgresql.cnpg.io/v1/namespaces/default/scheduledbackups/backup-example", nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedString(r.obj, "spec", "method")).To(Equal("barmanObjectStore"))
		r, err = cl.do(ctx, http.MethodGet, "/apis/postgresql.cnpg.io/v1/namespaces/default/publications/publication-example", nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(api.NestedString(r.obj, "spec", "publicationReclaimPolicy")).To(Equal("retain"))
	})

	It("prunes unknown fields, and refuses them with fieldValidation=Strict", func(ctx SpecContext) {
		foo := readDoc("crs/foos/example-foo.yaml")
		api.SetNestedField(foo, "pruned-foo", "metadata", "name")
		api.SetNestedField(foo, "x", "spec", "unknownField")
		r, err := cl.do(ctx, http.MethodPost, "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos?fieldValidation=Strict", foo, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusBadRequest))
		Expect(r.message()).To(ContainSubstring(`unknown field "spec.unknownField"`))
		r = create(ctx, foo)
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(api.NestedMap(r.obj, "spec")).NotTo(HaveKey("unknownField"))
		Expect(r.hdr.Get("Warning")).To(ContainSubstring("spec.unknownField"))
	})

	It("keeps only ObjectMeta's fields in metadata, matched case-sensitively", func(ctx SpecContext) {
		foo := readDoc("crs/foos/example-foo.yaml")
		api.SetNestedField(foo, "meta-foo", "metadata", "name")
		api.SetNestedField(foo, map[string]any{"tier": "x"}, "metadata", "Labels")
		r, err := cl.do(ctx, http.MethodPost, "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos?fieldValidation=Strict", foo, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusBadRequest), r.raw)
		Expect(r.message()).To(ContainSubstring(`unknown field "metadata.Labels"`))
		r = create(ctx, foo)
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(api.NestedMap(r.obj, "metadata")).NotTo(HaveKey("Labels"))
		Expect(r.hdr.Get("Warning")).To(ContainSubstring("metadata.Labels"))

		// "namE" is not the name: without a name the create is refused, and
		// nothing is stored under an empty one.
		bad := readDoc("crs/foos/example-foo.yaml")
		api.RemoveNestedField(bad, "metadata", "name")
		api.SetNestedField(bad, "shadow", "metadata", "namE")
		r = create(ctx, bad)
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)
		Expect(r.message()).To(ContainSubstring("name or generateName is required"))
	})

	DescribeTable("refuses the invalid variants of INVALID.md with the exact message",
		func(ctx SpecContext, file string, mutate func(map[string]any), want string) {
			obj := readDoc(file)
			mutate(obj)
			r := create(ctx, obj)
			Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)
			Expect(r.obj["reason"]).To(Equal("Invalid"))
			Expect(r.message()).To(Equal(want))
		},
		Entry("1a", "crs/foos/example-foo.yaml", func(o map[string]any) { api.SetNestedField(o, "three", "spec", "replicas") },
			`Foo.samplecontroller.k8s.io "example-foo" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`),
		Entry("1b", "crs/foos/example-foo.yaml", func(o map[string]any) { api.SetNestedField(o, int64(11), "spec", "replicas") },
			`Foo.samplecontroller.k8s.io "example-foo" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`),
		Entry("1c", "crs/foos/example-foo.yaml", func(o map[string]any) { api.SetNestedField(o, int64(0), "spec", "replicas") },
			`Foo.samplecontroller.k8s.io "example-foo" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1`),
		Entry("1d", "crs/foos/example-foo.yaml", func(o map[string]any) { api.SetNestedField(o, "Example_Foo", "metadata", "name") },
			`Foo.samplecontroller.k8s.io "Example_Foo" is invalid: metadata.name: Invalid value: "Example_Foo": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`),
		Entry("2a v1", "crs/referencegrants/reference-grant.yaml", func(o map[string]any) { api.RemoveNestedField(o, "spec", "to") },
			`ReferenceGrant.gateway.networking.k8s.io "allow-prod-traffic" is invalid: spec.to: Required value`),
		Entry("2a v1beta1", "crs/referencegrants/reference-grant.yaml", func(o map[string]any) {
			o["apiVersion"] = "gateway.networking.k8s.io/v1beta1"
			api.RemoveNestedField(o, "spec", "to")
		}, `ReferenceGrant.gateway.networking.k8s.io "allow-prod-traffic" is invalid: spec.to: Required value`),
		Entry("2b", "crs/referencegrants/reference-grant.yaml", func(o map[string]any) { from0(o)["kind"] = "HTTP Route" },
			`ReferenceGrant.gateway.networking.k8s.io "allow-prod-traffic" is invalid: spec.from[0].kind: Invalid value: "HTTP Route": spec.from[0].kind in body should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'`),
		Entry("2c", "crs/referencegrants/reference-grant.yaml", func(o map[string]any) { from0(o)["namespace"] = strings.Repeat("a", 64) },
			`ReferenceGrant.gateway.networking.k8s.io "allow-prod-traffic" is invalid: spec.from[0].namespace: Too long: may not be more than 63 bytes`),
		Entry("2d", "crs/referencegrants/reference-grant.yaml", func(o map[string]any) {
			from := api.NestedSlice(o, "spec", "from")
			for len(from) < 17 {
				from = append(from, api.DeepCopyJSONValue(from[0]))
			}
			api.SetNestedField(o, from, "spec", "from")
		}, `ReferenceGrant.gateway.networking.k8s.io "allow-prod-traffic" is invalid: spec.from: Too many: 17: must have at most 16 items`),
		Entry("2e", "crs/referencegrants/reference-grant.yaml", func(o map[string]any) { api.SetNestedField(o, []any{}, "spec", "from") },
			`ReferenceGrant.gateway.networking.k8s.io "allow-prod-traffic" is invalid: spec.from: Invalid value: 0: spec.from in body should have at least 1 items`),
		Entry("3a", "crs/scheduledbackups/scheduled-backup-example.yaml", func(o map[string]any) { api.SetNestedField(o, "owner", "spec", "backupOwnerReference") },
			`ScheduledBackup.postgresql.cnpg.io "backup-example" is invalid: [spec.backupOwnerReference: Unsupported value: "owner": supported values: "none", "self", "cluster", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`),
		Entry("3b", "crs/scheduledbackups/scheduled-backup-example.yaml", func(o map[string]any) { api.RemoveNestedField(o, "spec", "schedule") },
			`ScheduledBackup.postgresql.cnpg.io "backup-example" is invalid: [spec.schedule: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`),
		Entry("4a", "crs/publications/publication-example.yaml", func(o map[string]any) {
			api.SetNestedField(o, []any{map[string]any{"tablesInSchema": "public"}}, "spec", "target", "objects")
		}, `Publication.postgresql.cnpg.io "publication-example" is invalid: spec.target: Invalid value: "object": allTables and objects are mutually exclusive`),
		Entry("4b", "crs/publications/publication-example-objects.yaml", func(o map[string]any) {
			api.NestedSlice(o, "spec", "target", "objects")[1].(map[string]any)["tablesInSchema"] = "public"
		}, `Publication.postgresql.cnpg.io "publication-example-objects" is invalid: spec.target.objects[1]: Invalid value: "object": tablesInSchema and table are mutually exclusive`),
		Entry("5a", "crs/dnsendpoints/dnsendpoint-example.yaml", func(o map[string]any) { endpoint0(o)["recordTTL"] = "180" },
			`DNSEndpoint.externaldns.k8s.io "examplednsrecord" is invalid: spec.endpoints[0].recordTTL: Invalid value: "string": spec.endpoints[0].recordTTL in body must be of type integer: "string"`),
		Entry("5b", "crs/dnsendpoints/dnsendpoint-example.yaml", func(o map[string]any) { endpoint0(o)["labels"] = map[string]any{"a": int64(1)} },
			`DNSEndpoint.externaldns.k8s.io "examplednsrecord" is invalid: spec.endpoints[0].labels.a: Invalid value: "integer": spec.endpoints[0].labels.a in body must be of type string: "integer"`),
	)

	It("applies CEL transition rules on update only (3c)", func(ctx SpecContext) {
		path := "/apis/postgresql.cnpg.io/v1/namespaces/default/scheduledbackups/backup-example"
		r, err := cl.do(ctx, http.MethodGet, path, nil, nil)
		Expect(err).NotTo(HaveOccurred())
		obj := r.obj
		api.SetNestedField(obj, "other-cluster", "spec", "cluster", "name")
		r, err = cl.do(ctx, http.MethodPut, path, obj, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusUnprocessableEntity), r.raw)
		Expect(r.message()).To(Equal(`ScheduledBackup.postgresql.cnpg.io "backup-example" is invalid: spec.cluster: Invalid value: "object": cluster reference is immutable after creation`))

		fresh := readDoc("crs/scheduledbackups/scheduled-backup-example.yaml")
		api.SetNestedField(fresh, "backup-other", "metadata", "name")
		api.SetNestedField(fresh, "other-cluster", "spec", "cluster", "name")
		Expect(create(ctx, fresh).code).To(Equal(http.StatusCreated))
	})

	It("renders printer columns in Table output", func(ctx SpecContext) {
		r, err := cl.do(ctx, http.MethodGet, "/apis/druid.gardener.cloud/v1alpha1/namespaces/default/etcds", nil,
			map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(r.obj["kind"]).To(Equal("Table"))
		var names []string
		for _, c := range api.NestedSlice(r.obj, "columnDefinitions") {
			names = append(names, c.(map[string]any)["name"].(string))
		}
		Expect(names[0]).To(Equal("Name"))
		Expect(names).To(ContainElements("Ready", "Age"))
		rows := api.NestedSlice(r.obj, "rows")
		Expect(rows).To(HaveLen(1))
		cells := rows[0].(map[string]any)["cells"].([]any)
		Expect(cells).To(HaveLen(len(names)))
		Expect(cells[0]).To(Equal("etcd-test"))

		r, err = cl.do(ctx, http.MethodGet, "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos", nil,
			map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
		Expect(err).NotTo(HaveOccurred())
		cols := api.NestedSlice(r.obj, "columnDefinitions")
		Expect(cols).To(HaveLen(2))
		Expect(cols[1].(map[string]any)["name"]).To(Equal("Age"))
		Expect(api.NestedSlice(r.obj, "rows")[0].(map[string]any)["cells"].([]any)[1]).To(MatchRegexp(`^\d+s$`))

		r, err = cl.do(ctx, http.MethodGet, "/apis/stable.example.com/v1/namespaces/default/shirts", nil,
			map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.raw).To(ContainSubstring(`"Color"`))
	})

	It("serves the scale subresource of Etcd", func(ctx SpecContext) {
		path := "/apis/druid.gardener.cloud/v1alpha1/namespaces/default/etcds/etcd-test"
		r, err := cl.do(ctx, http.MethodGet, path+"/scale", nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(r.obj["kind"]).To(Equal("Scale"))
		Expect(i64(r.obj, "spec", "replicas")).To(BeNumerically("==", 3))
		api.SetNestedField(r.obj, int64(5), "spec", "replicas")
		r, err = cl.do(ctx, http.MethodPut, path+"/scale", r.obj, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		r, err = cl.do(ctx, http.MethodGet, path, nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(i64(r.obj, "spec", "replicas")).To(BeNumerically("==", 5))
		Expect(i64(r.obj, "metadata", "generation")).To(BeNumerically("==", 2))
	})

	It("refuses strategic merge patch for CRs", func(ctx SpecContext) {
		r, err := cl.do(ctx, http.MethodPatch, "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos/example-foo",
			[]byte(`{"spec":{"replicas":2}}`), map[string]string{"Content-Type": "application/strategic-merge-patch+json"})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusUnsupportedMediaType))
	})

	It("applies a schema update to new writes within a second", func(ctx SpecContext) {
		obj := getCRD(ctx, "foos.samplecontroller.k8s.io")
		v0 := api.NestedSlice(obj, "spec", "versions")[0].(map[string]any)
		api.SetNestedField(v0, int64(20), "schema", "openAPIV3Schema", "properties", "spec", "properties", "replicas", "maximum")
		r, err := cl.do(ctx, http.MethodPut, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.samplecontroller.k8s.io", obj, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		start := time.Now()
		Eventually(func(g Gomega) {
			foo := readDoc("crs/foos/example-foo.yaml")
			api.SetNestedField(foo, "foo-fifteen", "metadata", "name")
			api.SetNestedField(foo, int64(15), "spec", "replicas")
			g.Expect(create(ctx, foo).code).To(Equal(http.StatusCreated))
		}).WithTimeout(time.Second).WithPolling(10 * time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("schema update effective after %v\n", time.Since(start))
	})

	It("reports name conflicts as NamesAccepted=False", func(ctx SpecContext) {
		obj := readDoc("crds/samplecontroller.k8s.io_foos.yaml")
		api.SetNestedField(obj, "foosecond.samplecontroller.k8s.io", "metadata", "name")
		api.SetNestedField(obj, "foosecond", "spec", "names", "plural")
		r, err := cl.do(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Eventually(func(g Gomega) {
			o := getCRD(ctx, "foosecond.samplecontroller.k8s.io")
			g.Expect(conditionStatus(o, "NamesAccepted")).To(Equal("False"))
			g.Expect(conditionStatus(o, "Established")).To(Equal("False"))
		}).WithTimeout(time.Second).Should(Succeed())
	})

	It("stores CRs in the storage version and serves every served version", func(ctx SpecContext) {
		const (
			group   = "gateway.networking.k8s.io"
			v1      = group + "/v1"      // served, not stored
			v1beta1 = group + "/v1beta1" // served, storage version
		)
		coll := func(version string) string {
			return "/apis/" + group + "/" + version + "/namespaces/default/referencegrants"
		}
		key := func(name string) string { return "/registry/" + group + "/referencegrants/default/" + name }
		storedAPIVersion := func(name string) string {
			kv, err := env.ControlPlane.Storage().Get(ctx, key(name))
			Expect(err).NotTo(HaveOccurred())
			m, err := api.DecodeMap(kv.Value)
			Expect(err).NotTo(HaveOccurred())
			return api.NestedString(m, "apiVersion")
		}
		get := func(version, name string) map[string]any {
			r, err := cl.do(ctx, http.MethodGet, coll(version)+"/"+name, nil, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.code).To(Equal(http.StatusOK), r.raw)
			return r.obj
		}

		// Created through v1beta1 (the storage version) and through v1.
		grant := readDoc("crs/referencegrants/reference-grant.yaml")
		grant["apiVersion"] = v1beta1
		api.SetNestedField(grant, "grant-beta", "metadata", "name")
		r, err := cl.do(ctx, http.MethodPost, coll("v1beta1"), grant, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(r.obj["apiVersion"]).To(Equal(v1beta1))
		grant = readDoc("crs/referencegrants/reference-grant.yaml")
		api.SetNestedField(grant, "grant-v1", "metadata", "name")
		r, err = cl.do(ctx, http.MethodPost, coll("v1"), grant, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		Expect(r.obj["apiVersion"]).To(Equal(v1), "the response is in the request's version")
		Expect(storedAPIVersion("grant-beta")).To(Equal(v1beta1))
		Expect(storedAPIVersion("grant-v1")).To(Equal(v1beta1), "stored in the storage version")
		Expect(api.NestedSlice(getCRD(ctx, "referencegrants."+group), "status", "storedVersions")).To(Equal([]any{"v1beta1"}))

		// Reads through either version.
		for _, name := range []string{"grant-beta", "grant-v1"} {
			Expect(get("v1", name)["apiVersion"]).To(Equal(v1))
			Expect(get("v1beta1", name)["apiVersion"]).To(Equal(v1beta1))
		}
		var listRV string
		for version, av := range map[string]string{"v1": v1, "v1beta1": v1beta1} {
			for _, rv := range []string{"", "0"} { // from storage and from the watch cache
				r, err := cl.do(ctx, http.MethodGet, coll(version)+"?resourceVersion="+rv, nil, nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(r.code).To(Equal(http.StatusOK), r.raw)
				Expect(r.obj["apiVersion"]).To(Equal(av))
				items := api.NestedSlice(r.obj, "items")
				Expect(len(items)).To(BeNumerically(">=", 2))
				for _, it := range items {
					Expect(it.(map[string]any)["apiVersion"]).To(Equal(av), "list through %s (rv=%q)", version, rv)
				}
				listRV = api.NestedString(r.obj, "metadata", "resourceVersion")
			}
		}
		r, err = cl.do(ctx, http.MethodGet, coll("v1"), nil, map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(r.raw).To(ContainSubstring(`"apiVersion":"meta.k8s.io/v1"`))

		// A watch through the non-storage version sees v1 objects; a patch through
		// v1 of an object stored as v1beta1 works and keeps the storage version.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events := watchLines(wctx, coll("v1")+"?watch=1&resourceVersion="+listRV)
		r, err = cl.do(ctx, http.MethodPatch, coll("v1")+"/grant-beta", []byte(`{"metadata":{"labels":{"patched":"v1"}}}`),
			map[string]string{"Content-Type": "application/merge-patch+json"})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		Expect(r.obj["apiVersion"]).To(Equal(v1))
		Expect(storedAPIVersion("grant-beta")).To(Equal(v1beta1))
		grant = readDoc("crs/referencegrants/reference-grant.yaml")
		grant["apiVersion"] = v1beta1
		api.SetNestedField(grant, "grant-watched", "metadata", "name")
		r, err = cl.do(ctx, http.MethodPost, coll("v1beta1"), grant, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		var got []string
		for len(got) < 2 {
			var ev map[string]any
			Eventually(events).WithTimeout(5 * time.Second).Should(Receive(&ev))
			obj := ev["object"].(map[string]any)
			Expect(obj["apiVersion"]).To(Equal(v1), "watch event %v", ev)
			got = append(got, ev["type"].(string)+" "+api.NestedString(obj, "metadata", "name"))
		}
		Expect(got).To(Equal([]string{"MODIFIED grant-beta", "ADDED grant-watched"}))
	})

	It("deletes the CRs and the resource when the CRD is deleted", func(ctx SpecContext) {
		name := "shirts.stable.example.com"
		r, err := cl.do(ctx, http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.code).To(BeElementOf(http.StatusOK, http.StatusAccepted), r.raw)
		Eventually(func(g Gomega) {
			r, err := cl.do(ctx, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.code).To(Equal(http.StatusNotFound))
			r, err = cl.do(ctx, http.MethodGet, "/apis/stable.example.com/v1", nil, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.code).To(Equal(http.StatusNotFound))
		}).WithTimeout(5 * time.Second).WithPolling(20 * time.Millisecond).Should(Succeed())
		n, err := env.ControlPlane.Storage().Count(ctx, "/registry/stable.example.com/shirts/")
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
	})
})

// watchLines streams the watch at path and sends each event until ctx ends.
func watchLines(ctx context.Context, path string) <-chan map[string]any {
	out := make(chan map[string]any, 16)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.base+path, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	go func() {
		defer GinkgoRecover()
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			ev, err := api.DecodeMap(sc.Bytes())
			if err != nil {
				return
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func from0(o map[string]any) map[string]any {
	return api.NestedSlice(o, "spec", "from")[0].(map[string]any)
}

func endpoint0(o map[string]any) map[string]any {
	return api.NestedSlice(o, "spec", "endpoints")[0].(map[string]any)
}

func i64(obj map[string]any, path ...string) int64 {
	v, _ := api.NestedInt64(obj, path...)
	return v
}
