package apply

import (
	"encoding/json"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The managedFields Kubernetes records, byte for byte, for the writes of its
// own tests. Each expected fieldsV1 is copied from the Kubernetes source named
// in the entry (module k8s.io/kubernetes v1.34.4):
//
//   - apply_test.go: test/integration/apiserver/apply/apply_test.go
//   - e2e apply.go: test/e2e/apimachinery/apply.go (the conformance tests
//     "Server Side Apply, Create")
//
// Entries without fields in the Kubernetes test are compared on manager,
// operation and subresource only (fields ""). Where the Kubernetes test does
// not fix the order of the entries, it is the order Kubernetes' encoder sorts
// them in (sortEncodedManagedFields in k8s.io/apimachinery
// pkg/util/managedfields/internal/managedfields.go: operation, then time,
// then manager), given that an apply that changes nothing in the object
// records no time (managedFieldsUpdater.Apply, managedfieldsupdater.go): the
// second of two appliers of the same configuration comes first.

// wantEntry is one expected managedFields entry; fields "" skips the
// comparison of fieldsV1.
type wantEntry struct {
	manager, operation, subresource, fields string
}

// step is one request of a case; path is relative to the namespace's
// resource collection (e.g. "configmaps/test-cm"); editBody, when set,
// builds the body from the object at path (a GET) instead of body.
type step struct {
	method, path, query, contentType, body string
	editBody                               func(obj map[string]any) any
}

// servedEntries reads an object's managedFields as served: fieldsV1 as the
// raw bytes of the response, not decoded and encoded again.
func servedEntries(raw string) []wantEntry {
	GinkgoHelper()
	var obj struct {
		Metadata struct {
			ManagedFields []struct {
				Manager     string          `json:"manager"`
				Operation   string          `json:"operation"`
				Subresource string          `json:"subresource"`
				FieldsV1    json.RawMessage `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	Expect(json.Unmarshal([]byte(raw), &obj)).To(Succeed())
	var out []wantEntry
	for _, e := range obj.Metadata.ManagedFields {
		out = append(out, wantEntry{e.Manager, e.Operation, e.Subresource, string(e.FieldsV1)})
	}
	return out
}

// renameManagers sets every managedFields entry's manager to name and returns
// the object for a PUT (a client editing the entries it read).
func renameManagers(name string) func(map[string]any) any {
	return func(obj map[string]any) any {
		for _, e := range obj["metadata"].(map[string]any)["managedFields"].([]any) {
			e.(map[string]any)["manager"] = name
		}
		return obj
	}
}

const (
	// From TestRenamingAppliedFieldManagers and TestRenamingUpdatedFieldManagers
	// (apply_test.go).
	justAPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"just-a-pod","labels":{"a":"one"}},
"spec":{"containers":[{"name":"test-container-a","image":"test-image-one"}]}}`
	justAPodNoLabels = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"just-a-pod"},
"spec":{"containers":[{"name":"test-container-a","image":"test-image-one"}]}}`
	// From TestSubresourceField (apply_test.go).
	nginxDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"deployment","labels":{"app":"nginx"}},
"spec":{"replicas":3,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},
"spec":{"containers":[{"name":"nginx","image":"nginx:latest"}]}}}}`
	// The DaemonSet of TestDuplicatesInAssociativeLists (apply_test.go)
	// without its duplicate items, and the configuration it then applies.
	exampleDaemonSet = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"example-daemonset","labels":{"app":"example"}},
"spec":{"selector":{"matchLabels":{"app":"example"}},"template":{"metadata":{"labels":{"app":"example"}},
"spec":{"containers":[{"name":"nginx","image":"nginx","ports":[{"name":"port0","containerPort":1},{"name":"port1","containerPort":80}],
"env":[{"name":"ENV0","value":"/env0value"},{"name":"PATH","value":"/bin"}]}]}}}}`
	exampleDaemonSetApply = `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: example-daemonset
  labels:
    app: example
spec:
  selector:
    matchLabels:
      app: example
  template:
    spec:
      containers:
        - name: nginx
          image: nginx
          ports:
            - name: port3
              containerPort: 443
          env:
            - name: HOME
              value: "/usr/home"
`
)

// kubectlRunPod is what `kubectl run kubia --image=luksa/kubia --port=8080`
// sends.
const kubectlRunPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"run":"kubia"},"name":"kubia"},
"spec":{"containers":[{"image":"luksa/kubia","name":"kubia","ports":[{"containerPort":8080}],"resources":{}}],
"dnsPolicy":"ClusterFirst","restartPolicy":"Always"},"status":{}}`

// kubectlRunFields is the fieldsV1 Kubernetes records for kubectlRunPod's
// creator, with more fields of spec (sorted after terminationGracePeriodSeconds).
func kubectlRunFields(moreSpec string) string {
	return `{"f:metadata":{"f:labels":{".":{},"f:run":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"kubia\"}":{".":{},` +
		`"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":` +
		`{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},` +
		`"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},` +
		`"f:terminationGracePeriodSeconds":{}` + moreSpec + `}}`
}

var _ = DescribeTable("managedFields byte for byte as Kubernetes records them",
	func(ctx SpecContext, object string, steps []step, want []wantEntry) {
		ns := newNamespace(ctx)
		base := "/api/v1/namespaces/" + ns + "/"
		if strings.HasPrefix(object, "deployments/") || strings.HasPrefix(object, "daemonsets/") {
			base = "/apis/apps/v1/namespaces/" + ns + "/"
		}
		for i, s := range steps {
			body := any(s.body)
			if s.editBody != nil {
				r := call(ctx, http.MethodGet, base+s.path, "", nil, "")
				Expect(r.code).To(Equal(http.StatusOK), r.raw)
				body = s.editBody(r.obj)
			}
			path := base + s.path
			if s.query != "" {
				path += "?" + s.query
			}
			r := call(ctx, s.method, path, s.contentType, body, "")
			Expect(r.code).To(BeNumerically("<", 300), "step %d: %s", i, r.raw)
		}
		r := call(ctx, http.MethodGet, base+object, "", nil, "")
		Expect(r.code).To(Equal(http.StatusOK), r.raw)
		got := servedEntries(r.raw)
		Expect(got).To(HaveLen(len(want)), r.raw)
		for i, w := range want {
			if w.fields == "" {
				got[i].fields = ""
			}
		}
		Expect(got).To(Equal(want))
	},
	Entry("ConfigMap: an apply, then merge patches of another manager (TestApplyManagedFields, apply_test.go)",
		"configmaps/test-cm", []step{
			{method: http.MethodPatch, path: "configmaps/test-cm", query: "fieldManager=apply_test", contentType: applyType,
				body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"test-cm","labels":{"test-label":"test"}},"data":{"key":"value"}}`},
			{method: http.MethodPatch, path: "configmaps/test-cm", query: "fieldManager=updater", contentType: mergeType, body: `{"data":{"new-key":"value"}}`},
			{method: http.MethodPatch, path: "configmaps/test-cm", query: "fieldManager=updater", contentType: mergeType, body: `{"data":{"key":"new value"}}`},
		}, []wantEntry{
			{"apply_test", "Apply", "", `{"f:metadata":{"f:labels":{"f:test-label":{}}}}`},
			{"updater", "Update", "", `{"f:data":{"f:key":{},"f:new-key":{}}}`},
		}),
	Entry("Pod: containers keyed by name, two appliers of the same configuration (Server Side Apply, Create; e2e apply.go)",
		"pods/test-pod", []step{
			{method: http.MethodPatch, path: "pods/test-pod", query: "fieldManager=apply_test", contentType: applyType,
				body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-pod"},"spec":{"containers":[{"name":"test-container","image":"test-image"}]}}`},
			{method: http.MethodPatch, path: "pods/test-pod", query: "fieldManager=apply_test_2", contentType: applyType,
				body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-pod"},"spec":{"containers":[{"name":"test-container","image":"test-image"}]}}`},
		}, []wantEntry{
			{"apply_test_2", "Apply", "", `{"f:spec":{"f:containers":{"k:{\"name\":\"test-container\"}":{".":{},"f:image":{},"f:name":{}}}}}`},
			{"apply_test", "Apply", "", `{"f:spec":{"f:containers":{"k:{\"name\":\"test-container\"}":{".":{},"f:image":{},"f:name":{}}}}}`},
		}),
	Entry("Service: ports keyed by port and protocol (Server Side Apply, Create; e2e apply.go)",
		"services/test-svc", []step{
			{method: http.MethodPatch, path: "services/test-svc", query: "fieldManager=apply_test", contentType: applyType,
				body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"test-svc"},"spec":{"ports":[{"port":8080,"protocol":"UDP"}]}}`},
			{method: http.MethodPatch, path: "services/test-svc", query: "fieldManager=apply_test_2", contentType: applyType,
				body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"test-svc"},"spec":{"ports":[{"port":8080,"protocol":"UDP"}]}}`},
		}, []wantEntry{
			{"apply_test_2", "Apply", "", `{"f:spec":{"f:ports":{"k:{\"port\":8080,\"protocol\":\"UDP\"}":{".":{},"f:port":{},"f:protocol":{}}}}}`},
			{"apply_test", "Apply", "", `{"f:spec":{"f:ports":{"k:{\"port\":8080,\"protocol\":\"UDP\"}":{".":{},"f:port":{},"f:protocol":{}}}}}`},
		}),
	Entry("Deployment: an apply, then a merge patch of the scale subresource (TestSubresourceField, apply_test.go)",
		"deployments/deployment", []step{
			{method: http.MethodPatch, path: "deployments/deployment", query: "fieldManager=manager", contentType: applyType, body: nginxDeployment},
			{method: http.MethodPatch, path: "deployments/deployment/scale", query: "fieldManager=manager", contentType: mergeType, body: `{"spec":{"replicas":32}}`},
		}, []wantEntry{
			{"manager", "Apply", "", ""},
			{"manager", "Update", "scale", `{"f:spec":{"f:replicas":{}}}`},
		}),
	Entry("DaemonSet: an apply's containers, env and ports (TestDuplicatesInAssociativeLists, apply_test.go)",
		"daemonsets/example-daemonset", []step{
			{method: http.MethodPost, path: "daemonsets", query: "fieldManager=create", contentType: jsonType, body: exampleDaemonSet},
			{method: http.MethodPatch, path: "daemonsets/example-daemonset", query: "fieldManager=apply", contentType: applyType, body: exampleDaemonSetApply},
		}, []wantEntry{
			{"apply", "Apply", "", `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:selector":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:env":{"k:{\"name\":\"HOME\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":443,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{}}}}}}}}}`},
			{"create", "Update", "", ""},
		}),
	// A create's Update entry as kube-apiserver records it (create.go in
	// k8s.io/apiserver's endpoints/handlers: the field manager sees the
	// object as decoded and defaulted, before mutating admission and the
	// strategy's PrepareForCreate): the defaults are the creator's; status
	// (reset on create) and the tolerations DefaultTolerationSeconds
	// admission adds are no one's. Expected: `kubectl run kubia
	// --image=luksa/kubia --port=8080` on Kubernetes 1.22, as published in
	// "Kubernetes in Action" notes (a `kubectl get pod -o yaml`).
	Entry("Pod: kubectl run's create owns what it sent and the defaults, not status nor admission's tolerations",
		"pods/kubia", []step{
			{method: http.MethodPost, path: "pods", query: "fieldManager=kubectl-run", contentType: jsonType, body: kubectlRunPod},
		}, []wantEntry{
			{"kubectl-run", "Update", "", kubectlRunFields(``)},
		}),
	Entry("Pod: a create that sends tolerations and status owns the tolerations (atomic), not status",
		"pods/kubia", []step{
			{method: http.MethodPost, path: "pods", query: "fieldManager=kubectl-create", contentType: jsonType,
				body: strings.Replace(kubectlRunPod, `"restartPolicy":"Always"`,
					`"restartPolicy":"Always","tolerations":[{"key":"k","operator":"Exists"}]},"status":{"phase":"Running"`, 1)},
		}, []wantEntry{
			{"kubectl-create", "Update", "", kubectlRunFields(`,"f:tolerations":{}`)},
		}),
	Entry("Pod: applied managers renamed to one by a PUT keep the last entry (TestRenamingAppliedFieldManagers, apply_test.go)",
		"pods/just-a-pod", []step{
			{method: http.MethodPatch, path: "pods/just-a-pod", query: "fieldManager=multi_manager_one", contentType: applyType, body: justAPod},
			{method: http.MethodPatch, path: "pods/just-a-pod", query: "fieldManager=multi_manager_two", contentType: applyType,
				body: `{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"b":"two"}}}`},
			{method: http.MethodPut, path: "pods/just-a-pod", contentType: jsonType, editBody: renameManagers("multi_manager")},
		}, []wantEntry{
			{"multi_manager", "Apply", "", `{"f:metadata":{"f:labels":{"f:b":{}}}}`},
		}),
	Entry("Pod: updating managers renamed to one by a PUT (TestRenamingUpdatedFieldManagers, apply_test.go)",
		"pods/just-a-pod", []step{
			{method: http.MethodPatch, path: "pods/just-a-pod", query: "fieldManager=first", contentType: applyType, body: justAPodNoLabels},
			{method: http.MethodPatch, path: "pods/just-a-pod", query: "fieldManager=multi_manager_one", contentType: mergeType, body: `{"metadata":{"labels":{"a":"one"}}}`},
			{method: http.MethodPatch, path: "pods/just-a-pod", query: "fieldManager=multi_manager_two", contentType: mergeType, body: `{"metadata":{"labels":{"b":"two"}}}`},
			{method: http.MethodPut, path: "pods/just-a-pod", contentType: jsonType, editBody: renameManagers("multi_manager")},
		}, []wantEntry{
			{"multi_manager", "Apply", "", ""}, // the PUT renamed first's entry too
			{"multi_manager", "Update", "", `{"f:metadata":{"f:labels":{"f:b":{}}}}`},
		}),
)
