package all

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/internal/shared"
)

// TestCanonicalizeOwnedMatchesTyped checks, for the built-in kinds of the
// shared conformance manifests and CRDs, the API packages' test data and a few
// objects defaulting changes, that registry.OwnedCanonicalizer's
// CanonicalizeOwned gives what CanonicalizeTyped gives (the server's create
// takes the one, every other write the other): the same values of the same
// Go types, the same bytes once encoded, the same typed value, unknown fields
// and errors. Each object is checked as sent, with the metadata the server
// sets on create, and in its canonical form (which CanonicalizeOwned returns
// without a copy).
func TestCanonicalizeOwnedMatchesTyped(t *testing.T) {
	byGVK := map[string]*registry.Resource{}
	for _, r := range Resources() {
		byGVK[r.GroupVersion.String()+"/"+r.Kind] = r
	}
	var docs []map[string]any
	for _, pattern := range []string{
		shared.Path("conformance", "manifests", "*"),
		shared.Path("conformance", "crds", "*"),
		"../*/*/testdata/*.yaml",
		"../*/*/testdata/*.json",
	} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			docs = append(docs, yamlDocs(t, f)...)
		}
	}
	for _, in := range []string{
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"0.5","memory":"1073741824"}}}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"},"annotations":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"nginx","env":[{"name":"A","value":"1"}],"livenessProbe":{"httpGet":{"port":8080}}}],"volumes":[{"name":"v","configMap":{"name":"cm"}}],"tolerations":[{"key":"k","operator":"Exists"}]}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"selector":{"app":"d"},"ports":[{"port":80}]}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"},"data":{"k":"v","n":null},"binaryData":{"b":"aGVsbG8="}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"k":"v"},"data":{"b":"aGVsbG8="}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{},"labels":{},"finalizers":null},"spec":{"nodeSelector":{},"containers":[{"name":"c","image":"nginx","args":[],"stdin":false}]},"status":{}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","bogus":1},"spec":{"containers":[{"name":"c","image":"nginx","unknown":true}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":1}]}}`,
	} {
		m, err := api.DecodeMap([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, m)
	}
	checked := map[string]int{}
	for _, doc := range docs {
		av, _ := doc["apiVersion"].(string)
		kind, _ := doc["kind"].(string)
		r := byGVK[av+"/"+kind]
		if r == nil {
			continue
		}
		ts, typed := r.Strategy.(registry.TypedStrategy)
		oc, owned := r.Strategy.(registry.OwnedCanonicalizer)
		if !typed || !owned {
			continue
		}
		checked[kind]++
		created := api.DeepCopyJSON(doc)
		meta, _ := created["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			created["metadata"] = meta
		}
		meta["uid"] = "0b9e2c47-6f1d-4d8e-9a51-3c2f8e7d6a10"
		meta["creationTimestamp"] = "2026-12-05T21:00:00Z"
		if r.Namespaced {
			meta["namespace"] = "default"
		}
		if r.Generation {
			meta["generation"] = int64(1)
		}
		for _, obj := range []map[string]any{doc, created} {
			checkOwned(t, ts, oc, obj)
			out, _, _, errs := ts.CanonicalizeTyped(api.DeepCopyJSON(obj))
			if len(errs) > 0 {
				continue
			}
			b, err := api.EncodeJSON(out)
			if err != nil {
				t.Fatal(err)
			}
			canon, err := api.DecodeMap(b)
			if err != nil {
				t.Fatal(err)
			}
			checkOwned(t, ts, oc, canon)
		}
	}
	for _, k := range []string{"Pod", "Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Secret", "Service", "Namespace"} {
		if checked[k] == 0 {
			t.Errorf("no %s checked", k)
		}
	}
	t.Logf("checked: %v", checked)
}

func checkOwned(t *testing.T, ts registry.TypedStrategy, oc registry.OwnedCanonicalizer, obj map[string]any) {
	t.Helper()
	wantOut, wantDec, wantUnknown, wantErrs := ts.CanonicalizeTyped(api.DeepCopyJSON(obj))
	gotOut, gotDec, gotUnknown, gotErrs := oc.CanonicalizeOwned(api.DeepCopyJSON(obj))
	name := api.NestedString(obj, "kind") + " " + api.NestedString(obj, "metadata", "name")
	if diff := cmp.Diff(wantOut, gotOut); diff != "" {
		t.Errorf("%s: out (-typed +owned):\n%s", name, diff)
	}
	if diff := cmp.Diff(wantUnknown, gotUnknown); diff != "" {
		t.Errorf("%s: unknown (-typed +owned):\n%s", name, diff)
	}
	if w, g := wantErrs.ToError(), gotErrs.ToError(); (w == nil) != (g == nil) || w != nil && w.Error() != g.Error() {
		t.Errorf("%s: errors: typed %v, owned %v", name, w, g)
	}
	if !reflect.DeepEqual(wantDec.Value, gotDec.Value) || (wantDec.Meta == nil) != (gotDec.Meta == nil) {
		t.Errorf("%s: decoded value differs:\ntyped %+v\nowned %+v", name, wantDec.Value, gotDec.Value)
	}
	wb, werr := api.EncodeJSON(wantOut)
	gb, gerr := api.EncodeJSON(gotOut)
	if !bytes.Equal(wb, gb) || (werr == nil) != (gerr == nil) {
		t.Errorf("%s: encoded: typed %s (%v), owned %s (%v)", name, wb, werr, gb, gerr)
	}
}

// yamlDocs decodes the objects of a YAML or JSON file.
func yamlDocs(t *testing.T, file string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		if len(bytes.TrimSpace(bytes.TrimPrefix(doc, []byte("---")))) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m, err := api.DecodeMap(js); err == nil && m != nil {
			out = append(out, m)
		}
	}
	return out
}
