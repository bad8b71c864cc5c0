package badinput

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Paths of the fixtures setUp creates.
const (
	ns         = "bad"
	cmPath     = "/api/v1/namespaces/" + ns + "/configmaps"
	cm1Path    = cmPath + "/cm1"
	nsPath     = "/api/v1/namespaces"
	podPath    = "/api/v1/namespaces/" + ns + "/pods"
	p1Path     = podPath + "/p1"
	deployPath = "/apis/apps/v1/namespaces/" + ns + "/deployments"
	d1Path     = deployPath + "/d1"
	crdPath    = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	widgetPath = "/apis/bad.converge.dev/v1/namespaces/" + ns + "/widgets"
	w1Path     = widgetPath + "/w1"
	// w2Path is a widget only the concurrent requests patch: w1 grows
	// 10,000 levels deep in "deep nesting", and 25 concurrent patches of
	// that one measure the machine's speed, not the server's answers.
	w2Path      = widgetPath + "/w2"
	crdName     = "widgets.bad.converge.dev"
	validCM     = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-new","labels":{"app":"x"}},"data":{"k":"v"}}`
	validWidget = `{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"name":"w-new"},"spec":{"replicas":1,"color":"red"}}`
)

// watched are the lists compared before and after rejected requests.
var watched = []string{cmPath, podPath, deployPath, widgetPath, nsPath}

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.bad.converge.dev"},
 "spec":{"group":"bad.converge.dev","scope":"Namespaced",
  "names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
   "schema":{"openAPIV3Schema":{"type":"object","properties":{
    "spec":{"type":"object","properties":{
      "replicas":{"type":"integer","minimum":0},
      "color":{"type":"string","maxLength":20},
      "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
    "status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}`

func (h *harness) mustCreate(t *testing.T, path, body string) {
	t.Helper()
	resp := h.do(t, req{method: http.MethodPost, path: path, ctype: ctJSON, body: []byte(body)})
	if resp.code != http.StatusCreated {
		t.Fatalf("create in %s: %v", path, resp)
	}
}

// setUp creates the fixtures: a namespace, a ConfigMap, a Pod, a Deployment and
// a CRD with one custom resource.
func (h *harness) setUp(t *testing.T) {
	h.mustCreate(t, nsPath, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`)
	h.mustCreate(t, cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","labels":{"app":"a"}},"data":{"k":"v","list":"a"}}`)
	h.mustCreate(t, podPath, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	h.mustCreate(t, deployPath, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d1"},
	 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},
	 "spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`)
	h.mustCreate(t, crdPath, widgetCRD)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp := h.do(t, req{method: http.MethodPost, path: widgetPath, ctype: ctJSON,
			body: []byte(`{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":2,"color":"blue"}}`)})
		if resp.code == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Widget CRD is not served after 15s: %v", resp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.mustCreate(t, widgetPath, `{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"replicas":2,"color":"blue"}}`)
	// The CRD's status and the APIServices of every served group version
	// (the CRD's included) settle in the background; rejected requests are
	// then measured against a quiet store. The APIService sync retries a
	// failed pass after 1 s, so the store must stay quiet longer than that.
	for {
		resp := h.do(t, get("/apis/apiregistration.k8s.io/v1/apiservices/v1.bad.converge.dev"))
		if resp.code == http.StatusOK && available(resp.body) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Widget CRD's APIService is not Available after 15s: %v", resp)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rev, quietSince := h.revision(t), time.Now()
	for time.Since(quietSince) < 1500*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("the store is still changing after setup (revision %d)", rev)
		}
		time.Sleep(50 * time.Millisecond)
		if r := h.revision(t); r != rev {
			rev, quietSince = r, time.Now()
		}
	}
}

// available reports whether the APIService in body has Available=True.
func available(body []byte) bool {
	var s struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(body, &s) != nil {
		return false
	}
	for _, c := range s.Status.Conditions {
		if c.Type == "Available" && c.Status == "True" {
			return true
		}
	}
	return false
}

// tcase is one request the server must reject (or, when tolerated, may accept).
type tcase struct {
	name string
	req
	// want lists acceptable codes; empty means any 4xx.
	want []int
	// field is a field path the Status causes (or message) must name.
	field string
}

func (h *harness) runRejected(t *testing.T, cases []tcase) {
	t.Helper()
	for _, c := range cases {
		resp := h.do(t, c.req)
		st := checkRejected(t, c.name, resp, c.want...)
		if c.field != "" && !mentions(st, c.field) {
			t.Errorf("%s: the Status does not name field %q: %v", c.name, c.field, resp)
		}
	}
}

func mentions(st status, fieldPath string) bool {
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if strings.HasPrefix(c.Field, fieldPath) {
				return true
			}
		}
	}
	return strings.Contains(st.Message, fieldPath)
}

func post(path, ctype, body string) req {
	return req{method: http.MethodPost, path: path, ctype: ctype, body: []byte(body)}
}

func put(path, ctype, body string) req {
	return req{method: http.MethodPut, path: path, ctype: ctype, body: []byte(body)}
}

func patchReq(path, ctype, body string) req {
	return req{method: http.MethodPatch, path: path, ctype: ctype, body: []byte(body)}
}

func del(path, ctype, body string) req {
	r := req{method: http.MethodDelete, path: path, ctype: ctype}
	if body != "" {
		r.body = []byte(body)
	}
	return r
}

func get(path string) req { return req{method: http.MethodGet, path: path} }

func TestBadInput(t *testing.T) {
	start := time.Now()
	h := newHarness(t)
	h.setUp(t)
	rng := rand.New(rand.NewPCG(seed(t), 10))

	t.Run("syntax", func(t *testing.T) { h.unchanged(t, watched, func(t *testing.T) { h.syntax(t, rng) }) })
	t.Run("kinds and versions", func(t *testing.T) { h.unchanged(t, watched, h.kindsAndVersions) })
	t.Run("huge bodies", func(t *testing.T) { h.unchanged(t, watched, h.hugeBodies) })
	t.Run("invalid metadata", func(t *testing.T) { h.unchanged(t, watched, h.invalidMetadata) })
	t.Run("deep nesting", h.deepNesting)
	t.Run("protobuf garbage", func(t *testing.T) { h.unchanged(t, watched, func(t *testing.T) { h.protobufGarbage(t, rng) }) })
	t.Run("query parameters", func(t *testing.T) { h.unchanged(t, watched, h.queryParameters) })
	t.Run("patches", func(t *testing.T) { h.unchanged(t, watched, h.patches) })
	t.Run("delete options", func(t *testing.T) { h.unchanged(t, watched, h.deleteOptions) })
	t.Run("subresources", func(t *testing.T) { h.unchanged(t, watched, h.subresources) })
	t.Run("random mutants", func(t *testing.T) { h.randomMutants(t, rng) })
	t.Run("concurrent malformed", func(t *testing.T) {
		h.unchanged(t, watched, func(t *testing.T) { h.concurrentMalformed(t, rng) })
	})
	t.Run("healthy afterwards", h.healthy)
	t.Logf("suite took %v", time.Since(start).Round(time.Millisecond))
}

// syntax: truncated, random and wrongly shaped JSON and YAML.
func (h *harness) syntax(t *testing.T, rng *rand.Rand) {
	var cases []tcase
	for _, target := range []struct{ path, body string }{{cmPath, validCM}, {widgetPath, validWidget}} {
		// Every strict prefix of a valid object is malformed JSON.
		for n := 0; n < len(target.body); n += 1 + n/8 {
			cases = append(cases, tcase{name: fmt.Sprintf("truncated JSON %s at %d", target.path, n),
				req: post(target.path, ctJSON, target.body[:n]), want: []int{400}})
		}
		for i := range 10 {
			cases = append(cases, tcase{name: fmt.Sprintf("random bytes %s #%d", target.path, i),
				req: req{method: http.MethodPost, path: target.path, ctype: ctJSON, body: randomBytes(rng, 1+rng.IntN(200))}})
		}
	}
	shapes := []string{`null`, `[]`, `[{"kind":"ConfigMap"}]`, `"ConfigMap"`, `42`, `true`, `{}{}`,
		validCM + validCM, `{"a":1,}`, `{'a':1}`, "\xef\xbb\xbf" + validCM, `{"metadata":{"name":"x"}` + "\x00}",
		`{"data":{"k":"\ud800"}}garbage`, strings.Repeat(" ", 100), `{"metadata":{"name":"x"},"data":{"k":` + strings.Repeat("9", 400) + `}}`}
	for i, s := range shapes {
		cases = append(cases,
			tcase{name: fmt.Sprintf("bad JSON shape #%d create", i), req: post(cmPath, ctJSON, s)},
			tcase{name: fmt.Sprintf("bad JSON shape #%d update", i), req: put(cm1Path, ctJSON, s)},
		)
		if i != len(shapes)-1 { // a CR has no data field: the last shape is a valid Widget
			cases = append(cases, tcase{name: fmt.Sprintf("bad JSON shape #%d CR create", i), req: post(widgetPath, ctJSON, s)})
		}
	}
	yamls := []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [", "metadata:\n\tname: tab", "- a\n- b",
		"a: b: c", "metadata: {name: y}\ndata: {k: {nested: map}}", "&a [*a]", "metadata: !!binary zz",
		"--- \n...\n", "metadata:\n  name: y\n---\nmetadata:\n  name: z\n", "key: \"unterminated",
		"a: &x [1]\nb: *nope"}
	for i, s := range yamls {
		cases = append(cases,
			tcase{name: fmt.Sprintf("bad YAML #%d create", i), req: post(cmPath, ctYAML, s)},
			tcase{name: fmt.Sprintf("bad YAML #%d CR update", i), req: put(w1Path, ctYAML, s)},
		)
	}
	// Most prefixes of a YAML document are YAML too: they are sent as dry runs,
	// and may be accepted.
	y := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-yaml\ndata:\n  k: v\n"
	for n := 1; n < len(y); n += 3 {
		checkTolerated(t, fmt.Sprintf("truncated YAML at %d", n), h.do(t, post(cmPath+"?dryRun=All", ctYAML, y[:n])))
	}
	cases = append(cases,
		tcase{name: "unknown content type", req: post(cmPath, "text/plain", validCM), want: []int{415}},
		tcase{name: "garbage content type", req: post(cmPath, ";;;==", validCM), want: []int{415}},
		tcase{name: "empty body", req: post(cmPath, ctJSON, ""), want: []int{400}},
		tcase{name: "no body update", req: req{method: http.MethodPut, path: cm1Path, ctype: ctJSON}, want: []int{400}},
	)
	h.runRejected(t, cases)
}

// kindsAndVersions: apiVersion/kind that do not match the URL; unknown groups,
// versions and resources; wrong scopes.
func (h *harness) kindsAndVersions(t *testing.T) {
	h.runRejected(t, []tcase{
		{name: "kind Secret to configmaps", req: post(cmPath, ctJSON, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`), want: []int{400}},
		{name: "apiVersion v2", req: post(cmPath, ctJSON, `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}`), want: []int{400}},
		{name: "apiVersion apps/v1", req: post(cmPath, ctJSON, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}`), want: []int{400}},
		{name: "apiVersion a number", req: post(cmPath, ctJSON, `{"apiVersion":1,"kind":"ConfigMap","metadata":{"name":"x"}}`), want: []int{400}},
		{name: "kind an object", req: post(cmPath, ctJSON, `{"apiVersion":"v1","kind":{"a":1},"metadata":{"name":"x"}}`), want: []int{400}},
		{name: "kind Widget v2", req: post(widgetPath, ctJSON, `{"apiVersion":"bad.converge.dev/v2","kind":"Widget","metadata":{"name":"x"}}`), want: []int{400}},
		{name: "kind Gadget", req: post(widgetPath, ctJSON, `{"apiVersion":"bad.converge.dev/v1","kind":"Gadget","metadata":{"name":"x"}}`), want: []int{400}},
		{name: "update with other kind", req: put(cm1Path, ctJSON, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cm1"}}`), want: []int{400}},
		{name: "update CR with other group", req: put(w1Path, ctJSON, `{"apiVersion":"other.dev/v1","kind":"Widget","metadata":{"name":"w1"}}`), want: []int{400}},
		{name: "YAML with other kind", req: post(cmPath, ctYAML, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n"), want: []int{400}},
		{name: "unknown group", req: post("/apis/nope.example.com/v1/namespaces/"+ns+"/things", ctJSON, validCM), want: []int{404}},
		{name: "unknown version", req: post("/api/v2/namespaces/"+ns+"/configmaps", ctJSON, validCM), want: []int{404}},
		{name: "unknown CR version", req: post("/apis/bad.converge.dev/v9/namespaces/"+ns+"/widgets", ctJSON, validWidget), want: []int{404}},
		{name: "unknown resource", req: post("/api/v1/namespaces/"+ns+"/configmapz", ctJSON, validCM), want: []int{404}},
		{name: "unknown resource get", req: get("/api/v1/nopes"), want: []int{404}},
		{name: "unknown group discovery", req: get("/apis/nope.example.com/v1"), want: []int{404}},
		{name: "unknown group discovery root", req: get("/apis/nope.example.com"), want: []int{404}},
		{name: "too deep a path", req: get(cm1Path + "/status/extra"), want: []int{404}},
		{name: "unknown subresource", req: get(cm1Path + "/nope"), want: []int{404}},
		{name: "namespaced path for a cluster resource", req: post("/api/v1/namespaces/"+ns+"/namespaces", ctJSON, `{"metadata":{"name":"x"}}`), want: []int{404, 405}},
		{name: "namespaced resource without namespace", req: post("/api/v1/configmaps", ctJSON, validCM), want: []int{404, 405}},
		{name: "create with a name in the URL", req: post(cm1Path, ctJSON, validCM), want: []int{405}},
		{name: "body namespace differs", req: post(cmPath, ctJSON, `{"metadata":{"name":"x","namespace":"other"}}`), want: []int{400}},
		{name: "body name differs on update", req: put(cm1Path, ctJSON, `{"metadata":{"name":"other"}}`), want: []int{400}},
		{name: "missing namespace", req: post("/api/v1/namespaces/nope-ns/configmaps", ctJSON, validCM), want: []int{404}},
		{name: "update of a missing object", req: put(cmPath+"/nope", ctJSON, `{"metadata":{"name":"nope"}}`), want: []int{404}},
		{name: "unknown method", req: req{method: "BREW", path: cm1Path}, want: []int{405}},
		{name: "OPTIONS", req: req{method: http.MethodOptions, path: cm1Path}, want: []int{405}},
		{name: "create of existing", req: post(cmPath, ctJSON, `{"metadata":{"name":"cm1"}}`), want: []int{409}},
		{name: "stale resourceVersion", req: put(cm1Path, ctJSON, `{"metadata":{"name":"cm1","resourceVersion":"1"}}`), want: []int{409}},
		{name: "resourceVersion abc", req: put(cm1Path, ctJSON, `{"metadata":{"name":"cm1","resourceVersion":"abc"}}`), want: []int{400}},
		{name: "strict unknown field", req: post(cmPath+"?fieldValidation=Strict", ctJSON, `{"metadata":{"name":"x"},"bogus":1}`), want: []int{400}},
		{name: "strict unknown CR field", req: post(widgetPath+"?fieldValidation=Strict", ctJSON, `{"metadata":{"name":"x"},"spec":{"bogus":1}}`), want: []int{400}},
		{name: "bad fieldValidation", req: post(cmPath+"?fieldValidation=Bogus", ctJSON, validCM)},
		{name: "bad dryRun", req: post(cmPath+"?dryRun=Bogus", ctJSON, validCM)},
	})
}

// hugeBodies: > 3 MiB is 413 with or without a Content-Length; big objects
// under the limit are refused cleanly.
func (h *harness) hugeBodies(t *testing.T) {
	big := func(n int) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"k":"` + strings.Repeat("x", n) + `"}}`
	}
	bigCR := func(n int) string {
		return `{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"name":"huge"},"spec":{"free":{"k":"` + strings.Repeat("x", n) + `"}}}`
	}
	over := 3<<20 + 1
	cases := []tcase{
		{name: "3 MiB + 1 create", req: post(cmPath, ctJSON, big(over)), want: []int{413}},
		{name: "3 MiB + 1 create chunked", req: req{method: http.MethodPost, path: cmPath, ctype: ctJSON, body: []byte(big(over)), chunked: true}, want: []int{413}},
		{name: "3 MiB + 1 update", req: put(cm1Path, ctJSON, big(over)), want: []int{413}},
		{name: "3 MiB + 1 patch", req: patchReq(cm1Path, ctMerge, `{"data":{"k":"`+strings.Repeat("x", over)+`"}}`), want: []int{413}},
		{name: "3 MiB + 1 CR", req: post(widgetPath, ctJSON, bigCR(over)), want: []int{413}},
		{name: "3 MiB + 1 protobuf", req: req{method: http.MethodPost, path: cmPath, ctype: ctProtobuf, body: append(bytes.Clone(k8sMagic), make([]byte, over)...)}, want: []int{413}},
		{name: "3 MiB + 1 delete options", req: del(cm1Path, ctJSON, `{"kind":"DeleteOptions","x":"`+strings.Repeat("x", over)+`"}`), want: []int{413}},
		{name: "10 MiB chunked", req: req{method: http.MethodPost, path: widgetPath, ctype: ctJSON, body: []byte(bigCR(10 << 20)), chunked: true}, want: []int{413}},
		// Under the body limit but over what a ConfigMap may hold.
		{name: "2 MiB ConfigMap", req: post(cmPath, ctJSON, big(2<<20)), want: []int{422}},
		{name: "2 MiB ConfigMap update", req: put(cm1Path, ctJSON, strings.Replace(big(2<<20), `"huge"`, `"cm1"`, 1)), want: []int{422}},
		{name: "1.6 MiB custom resource", req: post(widgetPath, ctJSON, bigCR(1600<<10)), want: []int{413, 422}},
		// Under the body limit but over what the store takes in one write.
		{name: "2.5 MiB custom resource", req: post(widgetPath, ctJSON, bigCR(5<<19)), want: []int{413, 422}},
		{name: "2.5 MiB custom resource patch", req: patchReq(w1Path, ctMerge, `{"spec":{"free":{"k":"`+strings.Repeat("x", 5<<19)+`"}}}`), want: []int{413, 422}},
		{name: "2.5 MiB annotation", req: post(cmPath, ctJSON, `{"metadata":{"name":"ann","annotations":{"a":"`+strings.Repeat("x", 5<<19)+`"}}}`), field: "metadata.annotations"},
	}
	h.runRejected(t, cases)
}

// invalidMetadata: invalid names, label keys and values, annotations,
// finalizers: 422 with field paths.
func (h *harness) invalidMetadata(t *testing.T) {
	cm := func(meta string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":` + meta + `}`
	}
	long := strings.Repeat("a", 254)
	var cases []tcase
	for _, n := range []string{"UPPER", "a_b", long, "..", ".", "-a", "a-", "a b", "a/b", "%2F", "a\x00b", "ä"} {
		b, _ := json.Marshal(n)
		cases = append(cases, tcase{name: "configmap name " + fmt.Sprintf("%q", n), req: post(cmPath, ctJSON, cm(`{"name":`+string(b)+`}`)), want: []int{422}, field: "metadata.name"})
	}
	for _, n := range []string{"UPPER", strings.Repeat("a", 64), "a.b", "-a"} {
		cases = append(cases, tcase{name: "namespace name " + n, req: post(nsPath, ctJSON, `{"metadata":{"name":"`+n+`"}}`), want: []int{422}, field: "metadata.name"})
	}
	cases = append(cases,
		tcase{name: "no name", req: post(cmPath, ctJSON, cm(`{"labels":{"a":"b"}}`)), want: []int{422}, field: "metadata.name"},
		// JSON keys are case-sensitive: "namE" is not a name (a mutant found
		// this: the CR was stored under an empty key).
		tcase{name: "name key in other case", req: post(cmPath, ctJSON, cm(`{"namE":"x"}`)), want: []int{422}, field: "metadata.name"},
		tcase{name: "CR name key in other case", req: post(widgetPath, ctJSON,
			`{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"namE":"x"},"spec":{"replicas":1,"color":"red"}}`), want: []int{422}, field: "metadata.name"},
		tcase{name: "name a number", req: post(cmPath, ctJSON, cm(`{"name":5}`)), want: []int{400, 422}},
		tcase{name: "metadata a string", req: post(cmPath, ctJSON, cm(`"x"`)), want: []int{400, 422}},
		tcase{name: "metadata an array", req: post(cmPath, ctJSON, cm(`[]`)), want: []int{400, 422}},
		tcase{name: "bad generateName", req: post(cmPath, ctJSON, cm(`{"generateName":"UP_"}`)), want: []int{422}, field: "metadata.generateName"},
		tcase{name: "label key two slashes", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"a/b/c":"v"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "label key empty", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"":"v"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "label value 64 chars", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"a":"`+strings.Repeat("v", 64)+`"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "label value -x", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"a":"-x"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "label value space", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"a":"a b"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "label value a number", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"a":1}}`)), want: []int{400, 422}},
		tcase{name: "labels an array", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":["a"]}`)), want: []int{400, 422}},
		tcase{name: "label prefix too long", req: post(cmPath, ctJSON, cm(`{"name":"x","labels":{"`+strings.Repeat("a", 254)+`/k":"v"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "annotation key bad", req: post(cmPath, ctJSON, cm(`{"name":"x","annotations":{"a b":"v"}}`)), want: []int{422}, field: "metadata.annotations"},
		tcase{name: "annotations over 256 KiB", req: post(cmPath, ctJSON, cm(`{"name":"x","annotations":{"a":"`+strings.Repeat("v", 300<<10)+`"}}`)), want: []int{422}, field: "metadata.annotations"},
		tcase{name: "finalizer bad", req: post(cmPath, ctJSON, cm(`{"name":"x","finalizers":["a b/c/d"]}`)), want: []int{422}, field: "metadata.finalizers"},
		tcase{name: "ownerReference incomplete", req: post(cmPath, ctJSON, cm(`{"name":"x","ownerReferences":[{"kind":"ConfigMap"}]}`)), want: []int{422}, field: "metadata.ownerReferences"},
		tcase{name: "data value not a string", req: post(cmPath, ctJSON, `{"metadata":{"name":"x"},"data":{"k":1}}`), want: []int{400, 422}},
		tcase{name: "data key invalid", req: post(cmPath, ctJSON, `{"metadata":{"name":"x"},"data":{"a b":"v"}}`), want: []int{422}, field: "data"},
		tcase{name: "update label invalid", req: put(cm1Path, ctJSON, cm(`{"name":"cm1","labels":{"a":"-"}}`)), want: []int{422}, field: "metadata.labels"},
		tcase{name: "update changes uid precondition", req: put(cm1Path, ctJSON, cm(`{"name":"cm1","uid":"not-the-uid"}`)), want: []int{409, 422}},
		tcase{name: "CR name invalid", req: post(widgetPath, ctJSON, `{"metadata":{"name":"Bad_Name"},"spec":{}}`), want: []int{422}, field: "metadata.name"},
		tcase{name: "CR schema violation", req: post(widgetPath, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":-1}}`), want: []int{422}, field: "spec.replicas"},
		tcase{name: "CR wrong type", req: post(widgetPath, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":"two"}}`), want: []int{422}, field: "spec.replicas"},
		tcase{name: "CR string too long", req: post(widgetPath, ctJSON, `{"metadata":{"name":"x"},"spec":{"color":"`+strings.Repeat("c", 21)+`"}}`), want: []int{422}, field: "spec.color"},
		tcase{name: "pod without containers", req: post(podPath, ctJSON, `{"metadata":{"name":"x"},"spec":{}}`), want: []int{422}, field: "spec.containers"},
		tcase{name: "pod container without image", req: post(podPath, ctJSON, `{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c"}]}}`), want: []int{422}, field: "spec.containers[0].image"},
		tcase{name: "deployment negative replicas", req: post(deployPath, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":-1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`), want: []int{422}, field: "spec.replicas"},
		tcase{name: "pod spec a string", req: post(podPath, ctJSON, `{"metadata":{"name":"x"},"spec":"nope"}`), want: []int{400, 422}},
		tcase{name: "pod containers an object", req: post(podPath, ctJSON, `{"metadata":{"name":"x"},"spec":{"containers":{"name":"c"}}}`), want: []int{400, 422}},
	)
	h.runRejected(t, cases)
}

// deepNesting: 10,000-level arrays and objects must neither crash nor hang the
// server; each is refused with a 4xx or accepted.
func (h *harness) deepNesting(t *testing.T) {
	type dcase struct {
		name string
		req
	}
	var cases []dcase
	for _, depth := range []int{100, 1000, 9990, 10000, 100000} {
		arr := nested("[", "1", "]", depth)
		obj := nested(`{"a":`, "1", "}", depth)
		yamlArr := nested("[", "1", "]", depth)
		cases = append(cases,
			dcase{fmt.Sprintf("ConfigMap data array depth %d", depth), post(cmPath, ctJSON, `{"metadata":{"name":"deep"},"data":{"k":`+arr+`}}`)},
			dcase{fmt.Sprintf("ConfigMap data object depth %d", depth), post(cmPath, ctJSON, `{"metadata":{"name":"deep"},"data":{"k":`+obj+`}}`)},
			dcase{fmt.Sprintf("ConfigMap unknown field depth %d", depth), post(cmPath, ctJSON, `{"metadata":{"name":"deep"},"x":`+obj+`}`)},
			dcase{fmt.Sprintf("ConfigMap labels depth %d", depth), post(cmPath, ctJSON, `{"metadata":{"name":"deep","labels":`+obj+`}}`)},
			dcase{fmt.Sprintf("CR free array depth %d", depth), post(widgetPath, ctJSON, fmt.Sprintf(`{"metadata":{"name":"deep-a%d"},"spec":{"free":{"k":%s}}}`, depth, arr))},
			dcase{fmt.Sprintf("CR free object depth %d", depth), post(widgetPath, ctJSON, fmt.Sprintf(`{"metadata":{"name":"deep-o%d"},"spec":{"free":%s}}`, depth, obj))},
			dcase{fmt.Sprintf("CR typed field depth %d", depth), post(widgetPath, ctJSON, `{"metadata":{"name":"deep-t"},"spec":{"color":`+obj+`}}`)},
			dcase{fmt.Sprintf("CR YAML depth %d", depth), post(widgetPath, ctYAML, fmt.Sprintf("metadata: {name: deep-y%d}\nspec:\n  free:\n    k: %s\n", depth, yamlArr))},
			dcase{fmt.Sprintf("merge patch depth %d", depth), patchReq(cm1Path, ctMerge, `{"data":`+obj+`}`)},
			dcase{fmt.Sprintf("CR merge patch depth %d", depth), patchReq(w1Path, ctMerge, `{"spec":{"free":{"deep":`+obj+`}}}`)},
			dcase{fmt.Sprintf("JSON patch value depth %d", depth), patchReq(w1Path, ctJSONP, `[{"op":"add","path":"/spec/free/deep2","value":`+arr+`}]`)},
			dcase{fmt.Sprintf("SMP depth %d", depth), patchReq(d1Path, ctSMP, `{"spec":{"template":{"metadata":{"annotations":`+obj+`}}}}`)},
			dcase{fmt.Sprintf("delete options depth %d", depth), del(cmPath+"/nope", ctJSON, `{"kind":"DeleteOptions","preconditions":`+obj+`}`)},
		)
	}
	var created []string
	for _, c := range cases {
		start := time.Now()
		resp := h.do(t, c.req)
		checkTolerated(t, c.name, resp)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
		if resp.code == http.StatusCreated {
			created = append(created, c.path+"/"+nameIn(c.body))
		}
	}
	// Whatever was accepted can be read back, listed and watched.
	for _, p := range []string{widgetPath, cmPath} {
		if resp := h.do(t, get(p)); resp.code != http.StatusOK {
			t.Errorf("list %s after deep objects: %v", p, resp)
		}
		if resp := h.do(t, get(p+"?watch=true&timeoutSeconds=1")); resp.code != http.StatusOK {
			t.Errorf("watch %s after deep objects: %v", p, resp)
		}
	}
	// Deep objects are removed: they are deeper than Go's JSON decoder takes.
	for _, p := range created {
		if resp := h.do(t, del(p, "", "")); resp.code != http.StatusOK {
			t.Errorf("delete %s: %v", p, resp)
		}
	}
	if resp := h.do(t, req{method: http.MethodGet, path: w1Path, header: map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}}); resp.code != http.StatusOK {
		t.Errorf("table of w1 after deep patches: %v", resp)
	}
}

// nameIn returns metadata.name from the start of a JSON or YAML body written by
// deepNesting.
func nameIn(body []byte) string {
	s := string(body)
	for _, pre := range []string{`"name":"`, "name: "} {
		if i := strings.Index(s, pre); i >= 0 {
			s = s[i+len(pre):]
			return s[:strings.IndexAny(s, `"}`)]
		}
	}
	return ""
}

// protobufGarbage: bodies with the Kubernetes protobuf magic prefix and garbage
// after it.
func (h *harness) protobufGarbage(t *testing.T, rng *rand.Rand) {
	// A valid ConfigMap message: metadata{name}, data{k:v}.
	var meta, entry, cm []byte
	meta = protoBytes(meta, 1, []byte("pb1"))
	entry = protoBytes(protoBytes(entry, 1, []byte("k")), 2, []byte("v"))
	cm = protoBytes(protoBytes(cm, 1, meta), 2, entry)
	valid := protoUnknown("v1", "ConfigMap", cm)
	bodies := map[string][]byte{
		"magic only":              bytes.Clone(k8sMagic),
		"nothing":                 {},
		"wrong magic":             append([]byte("k8s\x01"), valid[4:]...),
		"magic + 0xff":            append(bytes.Clone(k8sMagic), 0xff, 0xff, 0xff),
		"huge length":             append(bytes.Clone(k8sMagic), 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f),
		"overflowing varint":      append(bytes.Clone(k8sMagic), 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"group wire type":         append(bytes.Clone(k8sMagic), 0x0b, 0x0c),
		"field zero":              append(bytes.Clone(k8sMagic), 0x02, 0x00),
		"wrong kind":              protoUnknown("v1", "Secret", cm),
		"wrong apiVersion":        protoUnknown("apps/v1", "ConfigMap", cm),
		"raw garbage":             protoUnknown("v1", "ConfigMap", []byte{0xff, 0x01, 0x02}),
		"raw truncated":           protoUnknown("v1", "ConfigMap", cm[:len(cm)-2]),
		"metadata wrong wiretype": protoUnknown("v1", "ConfigMap", []byte{0x08, 0x01}),
		"bad name":                protoUnknown("v1", "ConfigMap", protoBytes(nil, 1, protoBytes(nil, 1, []byte("Bad_Name")))),
		"invalid UTF-8 name":      protoUnknown("v1", "ConfigMap", protoBytes(nil, 1, protoBytes(nil, 1, []byte{0xff, 0xfe}))),
		"content encoding gzip":   protoBytes(protoBytes(bytes.Clone(k8sMagic), 2, cm), 3, []byte("gzip")),
		"JSON with protobuf type": []byte(validCM),
		"valid then trailing":     append(bytes.Clone(valid), 0xff),
		"typeMeta wrong wiretype": append(bytes.Clone(k8sMagic), 0x08, 0x01),
	}
	// Decodable as a ConfigMap, like Kubernetes: without typeMeta the kind is the
	// resource's.
	lenient := map[string][]byte{"no type meta": protoBytes(bytes.Clone(k8sMagic), 2, cm)}
	deepMeta := []byte{}
	for range 20000 { // nested length-delimited fields 20,000 deep
		deepMeta = protoBytes(nil, 1, deepMeta)
	}
	bodies["20000-deep messages"] = protoUnknown("v1", "ConfigMap", deepMeta)
	for i := range 40 {
		lenient[fmt.Sprintf("mutant #%d", i)] = append(bytes.Clone(k8sMagic), mutate(rng, valid[4:])...)
		lenient[fmt.Sprintf("random #%d", i)] = append(bytes.Clone(k8sMagic), randomBytes(rng, rng.IntN(300))...)
	}
	for name, b := range lenient {
		// A mutant may still decode to a valid ConfigMap: it is sent as a dry
		// run, so nothing can be stored.
		resp := h.do(t, req{method: http.MethodPut, path: cmPath + "/pb1?dryRun=All", ctype: ctProtobuf, body: b})
		checkTolerated(t, "protobuf "+name+" update dry run", resp)
		resp = h.do(t, req{method: http.MethodPost, path: cmPath + "?dryRun=All", ctype: ctProtobuf, body: b})
		checkTolerated(t, "protobuf "+name+" create dry run", resp)
	}
	var cases []tcase
	for name, b := range bodies {
		cases = append(cases,
			tcase{name: "protobuf " + name + " create", req: req{method: http.MethodPost, path: cmPath, ctype: ctProtobuf, body: b}},
			tcase{name: "protobuf " + name + " update", req: req{method: http.MethodPut, path: cm1Path, ctype: ctProtobuf, body: b}},
		)
		// An empty body is no DeleteOptions at all, and a bare prefix is empty
		// DeleteOptions (as in Kubernetes, the kind defaults to the expected one).
		if len(b) > len(k8sMagic) {
			cases = append(cases, tcase{name: "protobuf " + name + " delete options", req: req{method: http.MethodDelete, path: cm1Path, ctype: ctProtobuf, body: b}})
		}
		cases = append(cases,
			tcase{name: "protobuf " + name + " CR", req: req{method: http.MethodPost, path: widgetPath, ctype: ctProtobuf, body: b}, want: []int{415}},
			tcase{name: "protobuf " + name + " patch", req: req{method: http.MethodPatch, path: cm1Path, ctype: ctProtobuf, body: b}, want: []int{400, 415}},
			tcase{name: "protobuf " + name + " status", req: req{method: http.MethodPut, path: p1Path + "/status", ctype: ctProtobuf, body: b}},
		)
		// The eviction handler (builtin/api/core/v1) accepts an Eviction without
		// a name, so a bare prefix evicts: not sent here (see the report).
		if len(b) > len(k8sMagic) {
			cases = append(cases, tcase{name: "protobuf " + name + " eviction", req: req{method: http.MethodPost, path: p1Path + "/eviction", ctype: ctProtobuf, body: b}})
		}
		cases = append(cases,
			tcase{name: "protobuf " + name + " binding", req: req{method: http.MethodPost, path: p1Path + "/binding", ctype: ctProtobuf, body: b}},
			tcase{name: "protobuf " + name + " scale", req: req{method: http.MethodPut, path: d1Path + "/scale", ctype: ctProtobuf, body: b}},
			tcase{name: "protobuf " + name + " CRD", req: req{method: http.MethodPost, path: crdPath, ctype: ctProtobuf, body: b}},
		)
	}
	// "valid then trailing" could be read as a valid object followed by an
	// unknown field; everything else is malformed. It is checked as tolerated;
	// the surrounding unchanged() still requires the store not to move.
	var strict []tcase
	for _, c := range cases {
		if strings.Contains(c.name, "valid then trailing") && !strings.HasSuffix(c.name, " CR") && !strings.HasSuffix(c.name, " patch") {
			checkTolerated(t, c.name, h.do(t, c.req))
			continue
		}
		strict = append(strict, c)
	}
	h.runRejected(t, strict)
}

// queryParameters: limit, resourceVersion, timeoutSeconds, selectors,
// continue tokens.
func (h *harness) queryParameters(t *testing.T) {
	q := func(path string, params ...string) string {
		v := url.Values{}
		for i := 0; i < len(params); i += 2 {
			v.Add(params[i], params[i+1])
		}
		return path + "?" + v.Encode()
	}
	tok := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := []tcase{
		{name: "resourceVersion abc", req: get(q(cmPath, "resourceVersion", "abc")), want: []int{400}},
		{name: "resourceVersion -5", req: get(q(cmPath, "resourceVersion", "-5")), want: []int{400}},
		{name: "resourceVersion huge", req: get(q(cmPath, "resourceVersion", "99999999999999999999")), want: []int{400}},
		{name: "resourceVersion in the future", req: get(q(cmPath, "resourceVersion", "999999999")), want: []int{504}},
		{name: "Exact in the future", req: get(q(cmPath, "resourceVersion", "999999999", "resourceVersionMatch", "Exact")), want: []int{504}},
		{name: "Exact without resourceVersion", req: get(q(cmPath, "resourceVersionMatch", "Exact")), want: []int{422}},
		{name: "resourceVersionMatch bogus", req: get(q(cmPath, "resourceVersion", "1", "resourceVersionMatch", "Bogus")), want: []int{400, 422}},
		{name: "limit abc", req: get(q(cmPath, "limit", "abc")), want: []int{400}},
		{name: "continue garbage", req: get(q(cmPath, "continue", "!!!")), want: []int{400}},
		{name: "continue not JSON", req: get(q(cmPath, "continue", tok("nope"))), want: []int{400}},
		{name: "continue future rv", req: get(q(cmPath, "limit", "1", "continue", tok(`{"rv":999999999,"start":"/registry/"}`))), want: []int{400, 410, 504}},
		{name: "continue with resourceVersion", req: get(q(cmPath, "continue", tok(`{"rv":1,"start":"x"}`), "resourceVersion", "5")), want: []int{400, 410}},
		{name: "label selector garbage", req: get(q(cmPath, "labelSelector", "a in (")), want: []int{400}},
		{name: "label selector bad value", req: get(q(cmPath, "labelSelector", "a=-b-")), want: []int{400}},
		{name: "label selector bad key", req: get(q(cmPath, "labelSelector", "a/b/c=d")), want: []int{400}},
		{name: "label selector symbols", req: get(q(cmPath, "labelSelector", "!!!,,==")), want: []int{400}},
		{name: "field selector unsupported", req: get(q(cmPath, "fieldSelector", "spec.foo=bar")), want: []int{400}},
		{name: "field selector garbage", req: get(q(cmPath, "fieldSelector", "a==b==c")), want: []int{400}},
		{name: "field selector no operator", req: get(q(cmPath, "fieldSelector", "metadata.name")), want: []int{400}},
		{name: "field selector unsupported on pods", req: get(q(podPath, "fieldSelector", "spec.containers=x")), want: []int{400}},
		{name: "field selector unsupported on CRs", req: get(q(widgetPath, "fieldSelector", "spec.color=blue")), want: []int{400}},
		{name: "watch timeoutSeconds x", req: get(q(cmPath, "watch", "true", "timeoutSeconds", "x")), want: []int{400}},
		{name: "watch timeoutSeconds -1", req: get(q(cmPath, "watch", "true", "timeoutSeconds", "-1")), want: []int{400}},
		{name: "watch resourceVersion abc", req: get(q(cmPath, "watch", "true", "resourceVersion", "abc")), want: []int{400}},
		{name: "watch garbage label selector", req: get(q(cmPath, "watch", "true", "labelSelector", "a in (b")), want: []int{400}},
		{name: "watch garbage field selector", req: get(q(cmPath, "watch", "true", "fieldSelector", "x=")), want: []int{400}},
		{name: "watch unsupported field", req: get(q(cmPath, "watch", "true", "fieldSelector", "data.k=v")), want: []int{400}},
		{name: "watch legacy path garbage selector", req: get(q("/api/v1/watch/namespaces/"+ns+"/configmaps", "labelSelector", "(((")), want: []int{400}},
		{name: "watch resourceVersionMatch", req: get(q(cmPath, "watch", "true", "resourceVersionMatch", "NotOlderThan", "resourceVersion", "1")), want: []int{422}},
		{name: "watch sendInitialEvents", req: get(q(cmPath, "watch", "true", "sendInitialEvents", "true")), want: []int{422}},
		{name: "list sendInitialEvents", req: get(q(cmPath, "sendInitialEvents", "true")), want: []int{422}},
		{name: "delete gracePeriodSeconds abc", req: del(q(cm1Path, "gracePeriodSeconds", "abc"), "", ""), want: []int{400}},
		{name: "deletecollection bad selector", req: del(q(cmPath, "labelSelector", "a in ("), "", ""), want: []int{400}},
		{name: "deletecollection unsupported field", req: del(q(cmPath, "fieldSelector", "data.k=v"), "", ""), want: []int{400}},
		{name: "create bad dryRun", req: post(q(cmPath, "dryRun", "Bogus"), ctJSON, validCM), want: []int{400, 422}},
		{name: "update bad dryRun", req: put(q(cm1Path, "dryRun", "Nope"), ctJSON, `{"metadata":{"name":"cm1"},"data":{"k":"changed"}}`), want: []int{400, 422}},
		{name: "patch bad dryRun", req: patchReq(q(cm1Path, "dryRun", "all"), ctMerge, `{"data":{"k":"changed"}}`), want: []int{400, 422}},
		{name: "delete bad dryRun", req: del(q(cm1Path, "dryRun", "yes"), "", ""), want: []int{400, 422}},
		{name: "create bad fieldValidation", req: post(q(cmPath, "fieldValidation", "Bogus"), ctJSON, validCM), want: []int{400, 422}},
	}
	h.runRejected(t, cases)
	// Tolerated: accepted and ignored, or refused, but never a 5xx or a change.
	for _, c := range []tcase{
		{name: "limit -1", req: get(q(cmPath, "limit", "-1"))},
		// A negative revision is Kubernetes' "go on at the latest revision"
		// (the token of a 410 after compaction carries -1).
		{name: "continue negative rv", req: get(q(cmPath, "continue", tok(`{"rv":-1,"start":"x"}`)))},
		{name: "limit 0", req: get(q(cmPath, "limit", "0"))},
		{name: "limit huge", req: get(q(cmPath, "limit", "99999999999999999999"))},
		{name: "timeout garbage", req: get(q(cmPath, "timeout", "soon"))},
		{name: "watch=garbage", req: get(q(cmPath, "watch", "maybe"))},
		{name: "unknown parameter", req: get(q(cmPath, "bogus", "1"))},
		{name: "pretty garbage", req: get(q(cm1Path, "pretty", "x"))},
		{name: "watch on a subresource", req: get(q(w1Path+"/status", "watch", "true", "timeoutSeconds", "1"))},
		{name: "watch future resourceVersion", req: get(q(cmPath, "watch", "true", "resourceVersion", "999999999", "timeoutSeconds", "1"))},
		{name: "watch bookmarks garbage", req: get(q(cmPath, "watch", "1", "allowWatchBookmarks", "x", "timeoutSeconds", "1"))},
	} {
		checkTolerated(t, c.name, h.do(t, c.req))
	}
}

// patches: bad bodies for each patch type.
func (h *harness) patches(t *testing.T) {
	var cases []tcase
	for _, target := range []string{cm1Path, w1Path, d1Path} {
		for _, c := range []tcase{
			{name: "JSON patch not JSON", req: patchReq(target, ctJSONP, `[{"op":`), want: []int{400}},
			{name: "JSON patch an object", req: patchReq(target, ctJSONP, `{"op":"add"}`), want: []int{400}},
			// Kubernetes decodes these and fails them while applying: 422.
			{name: "JSON patch op missing", req: patchReq(target, ctJSONP, `[{"path":"/a","value":1}]`), want: []int{422}},
			{name: "JSON patch op bogus", req: patchReq(target, ctJSONP, `[{"op":"frobnicate","path":"/a"}]`), want: []int{422}},
			{name: "JSON patch op a number", req: patchReq(target, ctJSONP, `[{"op":1,"path":"/a"}]`), want: []int{422}},
			{name: "JSON patch path missing", req: patchReq(target, ctJSONP, `[{"op":"add","value":1}]`), want: []int{422}},
			{name: "JSON patch op not an object", req: patchReq(target, ctJSONP, `[1]`), want: []int{400}},
			{name: "JSON patch path without slash", req: patchReq(target, ctJSONP, `[{"op":"add","path":"metadata","value":1}]`), want: []int{400, 422}},
			{name: "JSON patch bad escape", req: patchReq(target, ctJSONP, `[{"op":"add","path":"/metadata/labels/a~2b","value":"x"}]`), want: []int{400, 422}},
			// Kubernetes reads a missing value as null, so this nulls the name.
			{name: "JSON patch add without value", req: patchReq(target, ctJSONP, `[{"op":"add","path":"/metadata/name"}]`), want: []int{400, 422}},
			{name: "JSON patch remove missing", req: patchReq(target, ctJSONP, `[{"op":"remove","path":"/nope/deeper"}]`), want: []int{400, 422}},
			// Kubernetes adds a missing member on replace; a missing parent fails.
			{name: "JSON patch replace missing", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/nope/deeper","value":"x"}]`), want: []int{422}},
			{name: "JSON patch move from missing", req: patchReq(target, ctJSONP, `[{"op":"move","from":"/nope","path":"/metadata/labels/x"}]`), want: []int{400, 422}},
			// Kubernetes copies a missing member as null, so this nulls the name.
			{name: "JSON patch copy from missing", req: patchReq(target, ctJSONP, `[{"op":"copy","from":"/nope","path":"/metadata/name"}]`), want: []int{400, 422}},
			{name: "JSON patch copy from missing parent", req: patchReq(target, ctJSONP, `[{"op":"copy","from":"/nope/deeper","path":"/metadata/labels/x"}]`), want: []int{422}},
			{name: "JSON patch move into itself", req: patchReq(target, ctJSONP, `[{"op":"move","from":"/metadata","path":"/metadata/labels/m"}]`), want: []int{400, 422}},
			{name: "JSON patch test fails", req: patchReq(target, ctJSONP, `[{"op":"test","path":"/metadata/name","value":"other"},{"op":"add","path":"/metadata/labels/t","value":"x"}]`), want: []int{400, 409, 422}},
			{name: "JSON patch test missing path", req: patchReq(target, ctJSONP, `[{"op":"test","path":"/nope","value":1}]`), want: []int{400, 409, 422}},
			{name: "JSON patch array index out of range", req: patchReq(target, ctJSONP, `[{"op":"add","path":"/metadata/finalizers/7","value":"x"}]`), want: []int{400, 422}},
			{name: "JSON patch array index garbage", req: patchReq(target, ctJSONP, `[{"op":"add","path":"/metadata/finalizers/1x","value":"x"}]`), want: []int{400, 422}},
			{name: "JSON patch replace root with array", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"","value":[1]}]`), want: []int{400, 422}},
			{name: "JSON patch replace root with null", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"","value":null}]`), want: []int{400, 422}},
			{name: "JSON patch remove root", req: patchReq(target, ctJSONP, `[{"op":"remove","path":""}]`), want: []int{400, 422}},
			{name: "JSON patch remove metadata", req: patchReq(target, ctJSONP, `[{"op":"remove","path":"/metadata"}]`), want: []int{400, 422}},
			{name: "JSON patch metadata a string", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/metadata","value":"x"}]`), want: []int{400, 422}},
			{name: "JSON patch rename", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/metadata/name","value":"other"}]`), want: []int{400, 422}},
			{name: "JSON patch change kind", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/kind","value":"Secret"}]`), want: []int{400, 422}},
			{name: "JSON patch change apiVersion", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/apiVersion","value":"v9"}]`), want: []int{400, 422}},
			{name: "JSON patch bad label", req: patchReq(target, ctJSONP, `[{"op":"add","path":"/metadata/labels","value":{"x":"-bad-"}}]`), want: []int{422}, field: "metadata.labels"},
			{name: "JSON patch stale resourceVersion", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/metadata/resourceVersion","value":"1"}]`), want: []int{409}},
			{name: "JSON patch resourceVersion abc", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/metadata/resourceVersion","value":"abc"}]`), want: []int{400}},
			{name: "merge patch an array", req: patchReq(target, ctMerge, `[{"a":1}]`), want: []int{400}},
			{name: "merge patch a string", req: patchReq(target, ctMerge, `"x"`), want: []int{400}},
			{name: "merge patch a number", req: patchReq(target, ctMerge, `7`), want: []int{400}},
			{name: "merge patch null", req: patchReq(target, ctMerge, `null`), want: []int{400, 422}},
			{name: "merge patch truncated", req: patchReq(target, ctMerge, `{"metadata":{"labels":{"a":`), want: []int{400}},
			{name: "merge patch metadata a string", req: patchReq(target, ctMerge, `{"metadata":"x"}`), want: []int{400, 422}},
			{name: "merge patch metadata null", req: patchReq(target, ctMerge, `{"metadata":null}`), want: []int{400, 422}},
			{name: "merge patch labels a list", req: patchReq(target, ctMerge, `{"metadata":{"labels":["a"]}}`), want: []int{400, 422}},
			{name: "merge patch other kind", req: patchReq(target, ctMerge, `{"kind":"Secret"}`), want: []int{400}},
			{name: "merge patch other apiVersion", req: patchReq(target, ctMerge, `{"apiVersion":"v9"}`), want: []int{400}},
			{name: "merge patch rename", req: patchReq(target, ctMerge, `{"metadata":{"name":"other"}}`), want: []int{400}},
			{name: "merge patch other namespace", req: patchReq(target, ctMerge, `{"metadata":{"namespace":"other"}}`), want: []int{400}},
			{name: "merge patch resourceVersion abc", req: patchReq(target, ctMerge, `{"metadata":{"resourceVersion":"abc"}}`), want: []int{400}},
			{name: "merge patch stale resourceVersion", req: patchReq(target, ctMerge, `{"metadata":{"resourceVersion":"1"}}`), want: []int{409}},
			{name: "merge patch bad label", req: patchReq(target, ctMerge, `{"metadata":{"labels":{"a":"-"}}}`), want: []int{422}, field: "metadata.labels"},
			{name: "merge patch empty", req: patchReq(target, ctMerge, ``), want: []int{400}},
			{name: "merge patch whitespace", req: patchReq(target, ctMerge, "  \n"), want: []int{400}},
			{name: "apply patch without fieldManager", req: patchReq(target, ctApply, "metadata: {name: x}"), want: []int{422}, field: "fieldManager"},
			{name: "patch text/plain", req: patchReq(target, "text/plain", `{}`), want: []int{415}},
			{name: "patch no content type", req: patchReq(target, "", `{}`), want: []int{415}},
		} {
			c.name = target + " " + c.name
			cases = append(cases, c)
		}
	}
	for _, target := range []string{cm1Path, d1Path, p1Path} {
		for _, c := range []tcase{
			{name: "SMP an array", req: patchReq(target, ctSMP, `[1]`), want: []int{400}},
			{name: "SMP truncated", req: patchReq(target, ctSMP, `{"metadata":`), want: []int{400}},
			{name: "SMP bogus $patch", req: patchReq(target, ctSMP, `{"$patch":"bogus"}`), want: []int{400, 422}},
			{name: "SMP $patch delete at root", req: patchReq(target, ctSMP, `{"$patch":"delete"}`), want: []int{400, 422}},
			{name: "SMP $patch a number", req: patchReq(target, ctSMP, `{"metadata":{"$patch":5}}`), want: []int{400, 422}},
			{name: "SMP $retainKeys not a list", req: patchReq(target, ctSMP, `{"metadata":{"$retainKeys":"labels"}}`), want: []int{400, 422}},
			{name: "SMP $retainKeys unknown key", req: patchReq(target, ctSMP, `{"metadata":{"$retainKeys":["nope"],"labels":{"a":"b"}}}`), want: []int{400, 422}},
			{name: "SMP $setElementOrder not a list", req: patchReq(target, ctSMP, `{"metadata":{"$setElementOrder/finalizers":"x"}}`), want: []int{400, 422}},
			{name: "SMP $deleteFromPrimitiveList not a list", req: patchReq(target, ctSMP, `{"metadata":{"$deleteFromPrimitiveList/finalizers":{"a":1}}}`), want: []int{400, 422}},
			{name: "SMP other kind", req: patchReq(target, ctSMP, `{"kind":"Secret"}`), want: []int{400}},
			{name: "SMP rename", req: patchReq(target, ctSMP, `{"metadata":{"name":"x"}}`), want: []int{400}},
			{name: "SMP bad label", req: patchReq(target, ctSMP, `{"metadata":{"labels":{"a":"-"}}}`), want: []int{422}, field: "metadata.labels"},
		} {
			c.name = target + " " + c.name
			cases = append(cases, c)
		}
	}
	cases = append(cases,
		tcase{name: "SMP on a custom resource", req: patchReq(w1Path, ctSMP, `{"spec":{"color":"red"}}`), want: []int{415}},
		tcase{name: "SMP containers without merge key", req: patchReq(p1Path, ctSMP, `{"spec":{"containers":[{"image":"x"}]}}`), want: []int{400, 422}},
		tcase{name: "SMP containers $patch delete without key", req: patchReq(p1Path, ctSMP, `{"spec":{"containers":[{"$patch":"delete"}]}}`), want: []int{400, 422}},
		tcase{name: "SMP containers not a list", req: patchReq(p1Path, ctSMP, `{"spec":{"containers":{"name":"c"}}}`), want: []int{400, 422}},
		tcase{name: "SMP containers $patch replace empty", req: patchReq(p1Path, ctSMP, `{"spec":{"containers":[{"$patch":"replace"}]}}`), want: []int{400, 422}},
		tcase{name: "SMP change immutable pod spec", req: patchReq(p1Path, ctSMP, `{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}`), want: []int{422}},
		tcase{name: "SMP deployment selector invalid", req: patchReq(d1Path, ctSMP, `{"spec":{"selector":{"matchLabels":{"app":"other"}}}}`), want: []int{422}},
		tcase{name: "patch a missing object", req: patchReq(cmPath+"/nope", ctMerge, `{"data":{"a":"b"}}`), want: []int{404}},
		tcase{name: "JSON patch a missing object", req: patchReq(cmPath+"/nope", ctJSONP, `[]`), want: []int{404}},
		tcase{name: "patch the collection", req: patchReq(cmPath, ctMerge, `{}`), want: []int{404, 405}},
		tcase{name: "CR merge patch schema violation", req: patchReq(w1Path, ctMerge, `{"spec":{"replicas":"many"}}`), want: []int{422}, field: "spec.replicas"},
		tcase{name: "CR JSON patch schema violation", req: patchReq(w1Path, ctJSONP, `[{"op":"replace","path":"/spec/replicas","value":-4}]`), want: []int{422}, field: "spec.replicas"},
		tcase{name: "CR merge patch strict unknown", req: patchReq(w1Path+"?fieldValidation=Strict", ctMerge, `{"spec":{"bogus":1}}`), want: []int{400}},
		tcase{name: "configmap merge patch data number", req: patchReq(cm1Path, ctMerge, `{"data":{"k":1}}`), want: []int{400, 422}},
	)
	h.runRejected(t, cases)
	// Tolerated, but must not change anything (checked by the caller).
	for _, target := range []string{cm1Path, d1Path, p1Path} {
		checkTolerated(t, target+" SMP unknown directive", h.do(t, patchReq(target, ctSMP, `{"metadata":{"$frob":1}}`)))
		checkTolerated(t, target+" empty merge patch", h.do(t, patchReq(target, ctMerge, `{}`)))
		checkTolerated(t, target+" empty JSON patch", h.do(t, patchReq(target, ctJSONP, `[]`)))
	}
	checkTolerated(t, "SMP $setElementOrder unknown elements", h.do(t, patchReq(p1Path, ctSMP,
		`{"spec":{"$setElementOrder/containers":[{"name":"nope"}],"containers":[{"name":"c","image":"busybox"}]}}`)))
}

// deleteOptions: bad DeleteOptions in the query and the body delete nothing.
func (h *harness) deleteOptions(t *testing.T) {
	var cases []tcase
	for _, target := range []string{cm1Path, w1Path, p1Path, cmPath} {
		for _, c := range []tcase{
			{name: "propagationPolicy bogus (query)", req: del(target+"?propagationPolicy=Bogus", "", ""), want: []int{422}, field: "propagationPolicy"},
			{name: "propagationPolicy bogus (body)", req: del(target, ctJSON, `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Sideways"}`), want: []int{422}, field: "propagationPolicy"},
			{name: "propagationPolicy empty string (body)", req: del(target, ctJSON, `{"propagationPolicy":""}`), want: []int{422}},
			{name: "both orphanDependents and propagationPolicy (body)", req: del(target, ctJSON, `{"orphanDependents":true,"propagationPolicy":"Background"}`), want: []int{422}},
			{name: "both orphanDependents and propagationPolicy (query)", req: del(target+"?orphanDependents=false&propagationPolicy=Foreground", "", ""), want: []int{422}},
			{name: "both, split between body and query", req: del(target+"?orphanDependents=true", ctJSON, `{"propagationPolicy":"Orphan"}`), want: []int{422}},
			{name: "body not JSON", req: del(target, ctJSON, `{"propagationPolicy":`), want: []int{400}},
			{name: "body an array", req: del(target, ctJSON, `[]`), want: []int{400}},
			{name: "body wrong types", req: del(target, ctJSON, `{"gracePeriodSeconds":"soon"}`), want: []int{400}},
			{name: "body preconditions a string", req: del(target, ctJSON, `{"preconditions":"x"}`), want: []int{400}},
			{name: "body dryRun a string", req: del(target, ctJSON, `{"dryRun":"All"}`), want: []int{400}},
			{name: "body dryRun bogus", req: del(target, ctJSON, `{"dryRun":["Bogus"]}`), want: []int{400, 422}},
			{name: "body other kind", req: del(target, ctJSON, `{"kind":"Pod","apiVersion":"v1"}`), want: []int{400}},
			{name: "negative gracePeriodSeconds", req: del(target+"?gracePeriodSeconds=-5&dryRun=Bogus", "", ""), want: []int{400, 422}},
			{name: "YAML garbage", req: del(target, ctYAML, "propagationPolicy: [\n"), want: []int{400}},
			{name: "text/plain body", req: del(target, "text/plain", "please delete"), want: []int{400, 415}},
		} {
			c.name = target + " " + c.name
			cases = append(cases, c)
		}
	}
	for _, target := range []string{cm1Path, w1Path, p1Path} {
		cases = append(cases,
			tcase{name: target + " uid precondition mismatch", req: del(target, ctJSON, `{"preconditions":{"uid":"nope"}}`), want: []int{409}},
			tcase{name: target + " resourceVersion precondition mismatch", req: del(target, ctJSON, `{"preconditions":{"resourceVersion":"1"}}`), want: []int{409}},
		)
	}
	cases = append(cases, tcase{name: "delete a missing object", req: del(cmPath+"/nope", "", ""), want: []int{404}})
	h.runRejected(t, cases)
}

// subresources: PUT and PATCH to status and scale with wrong bodies; verbs the
// subresources do not serve.
func (h *harness) subresources(t *testing.T) {
	// Custom resources require a resourceVersion on update; rejected requests
	// leave it where it is.
	var w1 struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if resp := h.do(t, get(w1Path)); resp.code != http.StatusOK || json.Unmarshal(resp.body, &w1) != nil {
		t.Fatalf("get w1: %v", resp)
	}
	rv := w1.Metadata.ResourceVersion
	cases := []tcase{
		{name: "status PUT other kind", req: put(w1Path+"/status", ctJSON, `{"apiVersion":"bad.converge.dev/v1","kind":"Gadget","metadata":{"name":"w1"}}`), want: []int{400}},
		{name: "status PUT other name", req: put(w1Path+"/status", ctJSON, `{"metadata":{"name":"w2","resourceVersion":"`+rv+`"},"status":{"replicas":1}}`), want: []int{400}},
		{name: "status PUT an array", req: put(w1Path+"/status", ctJSON, `[]`), want: []int{400}},
		{name: "status PUT truncated", req: put(w1Path+"/status", ctJSON, `{"status":`), want: []int{400}},
		{name: "status PUT schema violation", req: put(w1Path+"/status", ctJSON, `{"metadata":{"name":"w1","resourceVersion":"`+rv+`"},"status":{"replicas":"x"}}`), want: []int{422}, field: "status.replicas"},
		{name: "status PUT other uid", req: put(w1Path+"/status", ctJSON, `{"metadata":{"name":"w1","uid":"x","resourceVersion":"`+rv+`"},"status":{"replicas":1}}`), want: []int{409}},
		{name: "status PUT stale resourceVersion", req: put(w1Path+"/status", ctJSON, `{"metadata":{"name":"w1","resourceVersion":"1"},"status":{"replicas":1}}`), want: []int{409}},
		{name: "status PATCH non-object", req: patchReq(w1Path+"/status", ctMerge, `"x"`), want: []int{400}},
		{name: "status PATCH bad JSON patch", req: patchReq(w1Path+"/status", ctJSONP, `[{"op":"remove","path":"/status/nope"}]`), want: []int{400, 422}},
		{name: "status PATCH other kind", req: patchReq(w1Path+"/status", ctMerge, `{"kind":"Gadget"}`), want: []int{400}},
		{name: "status POST", req: post(w1Path+"/status", ctJSON, `{}`), want: []int{405}},
		{name: "status DELETE", req: del(w1Path+"/status", "", ""), want: []int{405}},
		{name: "status of a missing object", req: put(widgetPath+"/nope/status", ctJSON, `{"metadata":{"name":"nope","resourceVersion":"`+rv+`"}}`), want: []int{404}},
		{name: "pod status PUT bad phase", req: put(p1Path+"/status", ctJSON, `{"metadata":{"name":"p1"},"status":{"phase":7}}`), want: []int{400, 422}},
		{name: "pod status PUT other kind", req: put(p1Path+"/status", ctJSON, `{"kind":"Node","metadata":{"name":"p1"}}`), want: []int{400}},
		{name: "configmap has no status", req: put(cm1Path+"/status", ctJSON, `{"metadata":{"name":"cm1"}}`), want: []int{404}},
		{name: "configmap has no scale", req: put(cm1Path+"/scale", ctJSON, `{"spec":{"replicas":1}}`), want: []int{404}},
	}
	for _, target := range []string{w1Path + "/scale", d1Path + "/scale"} {
		own := strings.Split(target, "/")[len(strings.Split(target, "/"))-2]
		for _, c := range []tcase{
			{name: "PUT empty object", req: put(target, ctJSON, `{}`), want: []int{400, 422}},
			{name: "PUT other kind", req: put(target, ctJSON, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":0}}`), want: []int{400}},
			{name: "PUT other apiVersion", req: put(target, ctJSON, `{"apiVersion":"autoscaling/v9","kind":"Scale","spec":{"replicas":0}}`), want: []int{400}},
			{name: "PUT other name", req: put(target, ctJSON, `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"other"},"spec":{"replicas":0}}`), want: []int{400, 422}},
			{name: "PUT an array", req: put(target, ctJSON, `[]`), want: []int{400}},
			{name: "PUT truncated", req: put(target, ctJSON, `{"spec":{"replicas":`), want: []int{400}},
			{name: "PUT replicas a string", req: put(target, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":"three"}}`), want: []int{400, 422}},
			{name: "PUT replicas negative", req: put(target, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":-1}}`), want: []int{400, 422}},
			{name: "PUT replicas fractional", req: put(target, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":1.5}}`), want: []int{400, 422}},
			{name: "PUT replicas overflowing", req: put(target, ctJSON, `{"metadata":{"name":"x"},"spec":{"replicas":99999999999999999999}}`), want: []int{400, 422}},
			{name: "PUT spec a string", req: put(target, ctJSON, `{"metadata":{"name":"x"},"spec":"x"}`), want: []int{400, 422}},
			{name: "PUT stale resourceVersion", req: put(target, ctJSON, `{"metadata":{"name":"`+own+`","resourceVersion":"1"},"spec":{"replicas":0}}`), want: []int{409}},
			{name: "PUT no name", req: put(target, ctJSON, `{"spec":{"replicas":0}}`), want: []int{422}, field: "metadata.name"},
			{name: "PUT replicas negative (named)", req: put(target, ctJSON, `{"metadata":{"name":"`+own+`"},"spec":{"replicas":-1}}`), want: []int{422}, field: "spec.replicas"},
			{name: "PUT replicas a string (named)", req: put(target, ctJSON, `{"metadata":{"name":"`+own+`"},"spec":{"replicas":"x"}}`), want: []int{422}, field: "spec.replicas"},
			{name: "PUT protobuf", req: req{method: http.MethodPut, path: target, ctype: ctProtobuf, body: append(bytes.Clone(k8sMagic), 1, 2, 3)}, want: []int{400, 415}},
			{name: "PUT text/plain", req: put(target, "text/plain", `{"spec":{"replicas":0}}`), want: []int{415}},
			{name: "PATCH merge non-object", req: patchReq(target, ctMerge, `[0]`), want: []int{400}},
			{name: "PATCH merge negative", req: patchReq(target, ctMerge, `{"spec":{"replicas":-1}}`), want: []int{422}},
			{name: "PATCH merge replicas null", req: patchReq(target, ctMerge, `{"spec":{"replicas":"x"}}`), want: []int{400, 422}},
			{name: "PATCH merge other kind", req: patchReq(target, ctMerge, `{"kind":"Deployment","spec":{"replicas":0}}`), want: []int{400}},
			{name: "PATCH JSON patch test fails", req: patchReq(target, ctJSONP, `[{"op":"test","path":"/spec/replicas","value":77},{"op":"replace","path":"/spec/replicas","value":0}]`), want: []int{400, 409, 422}},
			{name: "PATCH JSON patch missing path", req: patchReq(target, ctJSONP, `[{"op":"replace","path":"/spec/nope/x","value":0}]`), want: []int{400, 422}},
			{name: "PATCH apply without fieldManager", req: patchReq(target, ctApply, `spec: {replicas: 0}`), want: []int{422}},
			{name: "PATCH empty", req: patchReq(target, ctMerge, ``), want: []int{400}},
			{name: "POST", req: post(target, ctJSON, `{}`), want: []int{405}},
			{name: "DELETE", req: del(target, "", ""), want: []int{405}},
		} {
			c.name = target + " " + c.name
			cases = append(cases, c)
		}
	}
	cases = append(cases,
		tcase{name: "scale of a missing object", req: put(widgetPath+"/nope/scale", ctJSON, `{"metadata":{"name":"nope"},"spec":{"replicas":0}}`), want: []int{404}},
		tcase{name: "eviction garbage", req: post(p1Path+"/eviction", ctJSON, `{"kind":`), want: []int{400}},
		tcase{name: "eviction other kind", req: post(p1Path+"/eviction", ctJSON, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"}}`), want: []int{400}},
		tcase{name: "eviction other name", req: post(p1Path+"/eviction", ctJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p2"}}`), want: []int{400}},
		tcase{name: "eviction bad delete options", req: post(p1Path+"/eviction", ctJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p1"},"deleteOptions":{"propagationPolicy":"Bogus"}}`), want: []int{400, 422}},
		tcase{name: "eviction an array", req: post(p1Path+"/eviction", ctJSON, `[]`), want: []int{400}},
		tcase{name: "eviction bad dryRun", req: post(p1Path+"/eviction", ctJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p1"},"deleteOptions":{"dryRun":["Yes"]}}`), want: []int{422}},
		tcase{name: "eviction both orphan and propagation", req: post(p1Path+"/eviction", ctJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p1"},"deleteOptions":{"orphanDependents":true,"propagationPolicy":"Orphan"}}`), want: []int{422}},
		tcase{name: "eviction metadata a string", req: post(p1Path+"/eviction", ctJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":"p1"}`), want: []int{400}},
		tcase{name: "binding garbage", req: post(p1Path+"/binding", ctJSON, `{"target":`), want: []int{400}},
		tcase{name: "binding without target", req: post(p1Path+"/binding", ctJSON, `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"}}`), want: []int{400, 422}},
		tcase{name: "binding other name", req: post(p1Path+"/binding", ctJSON, `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p2"},"target":{"kind":"Node","name":"n1"}}`), want: []int{400, 422}},
		tcase{name: "binding target a string", req: post(p1Path+"/binding", ctJSON, `{"metadata":{"name":"p1"},"target":"n1"}`), want: []int{400, 422}},
		tcase{name: "binding PUT", req: put(p1Path+"/binding", ctJSON, `{}`), want: []int{404, 405}},
		tcase{name: "log PUT", req: put(p1Path+"/log", ctJSON, `{}`), want: []int{404, 405}},
		tcase{name: "log bad tailLines", req: get(p1Path + "/log?tailLines=x"), want: []int{400}},
		tcase{name: "log bad container", req: get(p1Path + "/log?container=nope"), want: []int{400, 404}},
	)
	h.runRejected(t, cases)
	// A dry-run eviction evicts nothing.
	resp := h.do(t, post(p1Path+"/eviction", ctJSON, `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p1"},"deleteOptions":{"dryRun":["All"]}}`))
	checkTolerated(t, "dry-run eviction", resp)
}

// randomMutants: seeded mutations of valid bodies. Each is accepted or refused
// with a Status; the store changes by exactly the accepted writes.
func (h *harness) randomMutants(t *testing.T, rng *rand.Rand) {
	before := h.list(t, cmPath)
	beforeW := h.list(t, widgetPath)
	rev := h.revision(t)
	seeds := []struct {
		path, ctype, body string
	}{
		{cmPath, ctJSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mut","labels":{"a":"b"}},"data":{"k":"v"}}`},
		{cmPath, ctYAML, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mut\n  labels: {a: b}\ndata:\n  k: v\n"},
		{widgetPath, ctJSON, `{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"name":"mut"},"spec":{"replicas":1,"color":"red","free":{"x":[1,{"y":null}]}}}`},
	}
	accepted := 0
	for i := range 300 {
		s := seeds[rng.IntN(len(seeds))]
		body := mutate(rng, []byte(s.body))
		resp := h.do(t, req{method: http.MethodPost, path: s.path, ctype: s.ctype, body: body})
		if resp.code == http.StatusCreated {
			accepted++
			var o struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			if err := json.Unmarshal(resp.body, &o); err != nil || o.Metadata.Name == "" {
				t.Errorf("mutant %d accepted with a bad answer: %v", i, resp)
				continue
			}
			// Remove it so later mutants meet the same store.
			if d := h.do(t, del(s.path+"/"+url.PathEscape(o.Metadata.Name), "", "")); d.code != http.StatusOK {
				t.Errorf("delete accepted mutant %q (body %q, created %v): %v", o.Metadata.Name, body, resp, d)
			}
			accepted++
			continue
		}
		checkRejected(t, fmt.Sprintf("mutant %d %s %q", i, s.ctype, body), resp)
	}
	t.Logf("%d of 300 mutants were valid objects", accepted/2)
	if got := h.revision(t); got != rev+int64(accepted) {
		t.Errorf("revision moved from %d to %d; %d writes were accepted", rev, got, accepted)
	}
	if after := h.list(t, cmPath); fmt.Sprint(after.items) != fmt.Sprint(before.items) {
		t.Errorf("configmaps changed: %v → %v", before.items, after.items)
	}
	if after := h.list(t, widgetPath); fmt.Sprint(after.items) != fmt.Sprint(beforeW.items) {
		t.Errorf("widgets changed: %v → %v", beforeW.items, after.items)
	}
}

// concurrentMalformed: 200 malformed requests at once, every answer a 4xx
// Status.
func (h *harness) concurrentMalformed(t *testing.T, rng *rand.Rand) {
	valid := []byte(validCM)
	reqs := make([]req, 200)
	for i := range reqs {
		switch i % 8 {
		case 0:
			reqs[i] = post(cmPath, ctJSON, string(valid[:rng.IntN(len(valid)-1)]))
		case 1:
			reqs[i] = req{method: http.MethodPost, path: cmPath, ctype: ctProtobuf, body: append(bytes.Clone(k8sMagic), randomBytes(rng, 1+rng.IntN(64))...)}
		case 2:
			reqs[i] = post(cmPath, ctJSON, fmt.Sprintf(`{"metadata":{"name":"Bad_%d"}}`, i))
		case 3:
			reqs[i] = patchReq(cm1Path, ctJSONP, `[{"op":"test","path":"/data/k","value":"not-v"},{"op":"remove","path":"/data"}]`)
		case 4:
			reqs[i] = patchReq(w2Path, ctMerge, `{"spec":{"replicas":-`+fmt.Sprint(i)+`}}`)
		case 5:
			reqs[i] = del(cm1Path+"?propagationPolicy=Nope", "", "")
		case 6:
			reqs[i] = get(cmPath + "?watch=true&labelSelector=" + url.QueryEscape("a in ("+fmt.Sprint(i)))
		case 7:
			reqs[i] = put(d1Path+"/scale", ctJSON, `{"metadata":{"name":"d1"},"spec":{"replicas":-1}}`)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i, rq := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.do(t, rq)
			mu.Lock()
			codes[resp.code]++
			mu.Unlock()
			checkRejected(t, fmt.Sprintf("concurrent #%d %s %s", i, rq.method, rq.path), resp)
		}()
	}
	wg.Wait()
	t.Logf("answers: %v", codes)
}

// healthy: the server still answers and works normally.
func (h *harness) healthy(t *testing.T) {
	for _, p := range []string{"/readyz", "/healthz", "/livez"} {
		if resp := h.do(t, get(p)); resp.code != http.StatusOK || string(resp.body) != "ok" {
			t.Errorf("%s: %v", p, resp)
		}
	}
	h.mustCreate(t, cmPath, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"},"data":{"k":"v"}}`)
	if resp := h.do(t, patchReq(cmPath+"/after", ctMerge, `{"data":{"k":"w"}}`)); resp.code != http.StatusOK {
		t.Errorf("patch after the suite: %v", resp)
	}
	if resp := h.do(t, get(cm1Path)); resp.code != http.StatusOK || !bytes.Contains(resp.body, []byte(`"k":"v"`)) {
		t.Errorf("cm1 after the suite: %v", resp)
	}
	if resp := h.do(t, get(w1Path)); resp.code != http.StatusOK || !bytes.Contains(resp.body, []byte(`"replicas":2`)) {
		t.Errorf("w1 after the suite: %v", resp)
	}
	if resp := h.do(t, get(d1Path+"/scale")); resp.code != http.StatusOK || !bytes.Contains(resp.body, []byte(`"spec":{"replicas":2}`)) {
		t.Errorf("d1 scale after the suite: %v", resp)
	}
	h.mustCreate(t, widgetPath, `{"apiVersion":"bad.converge.dev/v1","kind":"Widget","metadata":{"name":"after"},"spec":{"replicas":3}}`)
	if resp := h.do(t, del(cmPath+"/after", "", "")); resp.code != http.StatusOK {
		t.Errorf("delete after the suite: %v", resp)
	}
}
