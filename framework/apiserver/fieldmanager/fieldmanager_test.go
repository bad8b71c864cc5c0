package fieldmanager

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/google/go-cmp/cmp"
)

// Test types shaped like apps/v1 Deployment, with the markers the built-in
// types carry.
type deployment struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           deploymentSpec `json:"spec,omitempty"`
	Status         struct {
		Replicas int32 `json:"replicas,omitempty"`
	} `json:"status,omitempty"`
}

type deploymentSpec struct {
	Replicas *int32             `json:"replicas,omitempty"`
	Selector *api.LabelSelector `json:"selector"`
	Template struct {
		api.ObjectMeta `json:"metadata,omitempty"`
		Spec           podSpec `json:"spec,omitempty"`
	} `json:"template"`
}

type podSpec struct {
	Containers   []container       `json:"containers" patchStrategy:"merge" patchMergeKey:"name"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty" mapType:"atomic"`
	Args         []string          `json:"args,omitempty"`
}

type container struct {
	Name  string   `json:"name"`
	Image string   `json:"image,omitempty"`
	Ports []port   `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"containerPort" listType:"map" listMapKeys:"containerPort,protocol"`
	Env   []envVar `json:"env,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

type port struct {
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty" default:"TCP"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

var fixed = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	typ, err := TypeOf(reflect.TypeFor[deployment]())
	if err != nil {
		t.Fatal(err)
	}
	opts.Type = typ
	if opts.APIVersion == "" {
		opts.APIVersion = "apps/v1"
	}
	opts.Now = func() time.Time { return fixed }
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := api.DecodeMap([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// canon is s as the API server stores it: through the Go type.
func canon(t *testing.T, s string) map[string]any {
	t.Helper()
	var d deployment
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return obj(t, string(b))
}

func entries(t *testing.T, o map[string]any) string {
	t.Helper()
	b, err := json.Marshal(api.NestedSlice(o, "metadata", "managedFields"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const dep = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"},"finalizers":["a"]},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
"spec":{"containers":[{"name":"nginx","image":"nginx","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}]}],"nodeSelector":{"k":"v"},"args":["x"]}}}}`

func TestUpdateOnCreate(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	o := canon(t, dep)
	if err := m.Update(nil, o, "kubectl-create"); err != nil {
		t.Fatal(err)
	}
	want := `[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"a\"":{}},"f:labels":{".":{},"f:app":{}}},` +
		`"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:args":{},` +
		`"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},` +
		`"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},"f:nodeSelector":{}}}}},` +
		`"manager":"kubectl-create","operation":"Update","time":"2026-12-04T10:00:00Z"}]`
	if diff := cmp.Diff(want, entries(t, o)); diff != "" {
		t.Errorf("managedFields (-want +got):\n%s", diff)
	}
}

func TestUpdateMergesPerManagerAndSkipsUntracked(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	live := canon(t, dep)
	if err := m.Update(nil, live, "a"); err != nil {
		t.Fatal(err)
	}
	api.SetNestedField(live, "uid-1", "metadata", "uid")
	next := api.DeepCopyJSON(live)
	api.SetNestedField(next, int64(3), "spec", "replicas")
	if err := m.Update(live, next, "b"); err != nil {
		t.Fatal(err)
	}
	next2 := api.DeepCopyJSON(next)
	api.SetNestedField(next2, "v2", "metadata", "labels", "extra")
	if err := m.Update(next, next2, "b"); err != nil {
		t.Fatal(err)
	}
	mf := api.NestedSlice(next2, "metadata", "managedFields")
	if len(mf) != 2 {
		t.Fatalf("want 2 entries (a, b), got %s", entries(t, next2))
	}
	b := mf[1].(map[string]any)
	if b["manager"] != "b" {
		t.Fatalf("second entry is %v", b["manager"])
	}
	got, _ := json.Marshal(b["fieldsV1"])
	if want := `{"f:metadata":{"f:labels":{"f:extra":{}}},"f:spec":{"f:replicas":{}}}`; string(got) != want {
		t.Errorf("b owns %s, want %s", got, want)
	}
	// An existing object without managedFields stays without them.
	plain := canon(t, dep)
	api.SetNestedField(plain, "uid-2", "metadata", "uid")
	p2 := api.DeepCopyJSON(plain)
	api.SetNestedField(p2, int64(5), "spec", "replicas")
	if err := m.Update(plain, p2, "c"); err != nil {
		t.Fatal(err)
	}
	if _, ok := api.NestedField(p2, "metadata", "managedFields"); ok {
		t.Errorf("untracked object got managedFields %s", entries(t, p2))
	}
}

func TestUpdateResetAndSubresource(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	live := canon(t, dep)
	_ = m.Update(nil, live, "a")
	api.SetNestedField(live, "uid-1", "metadata", "uid")
	for _, reset := range []any{[]any{}, []any{map[string]any{}}} {
		next := api.DeepCopyJSON(live)
		api.SetNestedField(next, reset, "metadata", "managedFields")
		if err := m.Update(live, next, "b"); err != nil {
			t.Fatal(err)
		}
		if _, ok := api.NestedField(next, "metadata", "managedFields"); ok {
			t.Errorf("reset %v kept %s", reset, entries(t, next))
		}
	}
	st := newManager(t, Options{Subresource: "status", Only: []string{"status"}})
	next := api.DeepCopyJSON(live)
	api.SetNestedField(next, int64(2), "status", "replicas")
	if err := st.Update(live, next, "ctrl"); err != nil {
		t.Fatal(err)
	}
	mf := api.NestedSlice(next, "metadata", "managedFields")
	last := mf[len(mf)-1].(map[string]any)
	if last["subresource"] != "status" || last["manager"] != "ctrl" {
		t.Fatalf("status entry: %s", entries(t, next))
	}
	got, _ := json.Marshal(last["fieldsV1"])
	if want := `{"f:status":{"f:replicas":{}}}`; string(got) != want {
		t.Errorf("status entry owns %s, want %s", got, want)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	cfg := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"web"}},
"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"%s}]}}}}`
	live, changed, err := m.Apply(nil, obj(t, sprintf(cfg, 1, `,"env":[{"name":"A","value":"1"}]`)), "app", false)
	if err != nil || !changed {
		t.Fatalf("create apply: changed=%v err=%v", changed, err)
	}
	if got := entries(t, live); !contains(got, `"manager":"app","operation":"Apply"`) {
		t.Fatalf("entries %s", got)
	}
	api.SetNestedField(live, "uid", "metadata", "uid")
	// The same configuration again changes nothing.
	_, changed, err = m.Apply(live, obj(t, sprintf(cfg, 1, `,"env":[{"name":"A","value":"1"}]`)), "app", false)
	if err != nil || changed {
		t.Fatalf("repeat apply: changed=%v err=%v", changed, err)
	}
	// Dropping env removes it: app owned it alone.
	next, _, err := m.Apply(live, obj(t, sprintf(cfg, 1, "")), "app", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := api.NestedSlice(next, "spec", "template", "spec", "containers")[0].(map[string]any)["env"]; ok {
		t.Errorf("env kept after the applier dropped it")
	}
	// Another applier changing replicas conflicts; force takes it over.
	_, _, err = m.Apply(next, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":5}}`), "other", false)
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 409 {
		t.Fatalf("want 409, got %v", err)
	}
	wantCause := api.StatusCause{Type: "FieldManagerConflict", Message: `conflict with "app"`, Field: ".spec.replicas"}
	if diff := cmp.Diff([]api.StatusCause{wantCause}, se.ErrStatus.Details.Causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	if want := `Apply failed with 1 conflict: conflict with "app": .spec.replicas`; se.ErrStatus.Message != want {
		t.Errorf("message %q, want %q", se.ErrStatus.Message, want)
	}
	forced, _, err := m.Apply(next, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":5}}`), "other", true)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := api.NestedInt64(forced, "spec", "replicas"); r != 5 {
		t.Errorf("replicas %d after force", r)
	}
	// app no longer owns replicas: dropping it from app's config keeps it.
	after, _, err := m.Apply(forced, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},
"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}`), "app", false)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := api.NestedInt64(after, "spec", "replicas"); r != 5 {
		t.Errorf("replicas %d, want 5 (owned by other)", r)
	}
}

func TestApplyConflictWithUpdater(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	live := canon(t, dep)
	if err := m.Update(nil, live, "kubectl-client-side-apply"); err != nil {
		t.Fatal(err)
	}
	api.SetNestedField(live, "uid", "metadata", "uid")
	_, _, err := m.Apply(live, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":7}}`), "kubectl", false)
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != 409 {
		t.Fatalf("want 409, got %v", err)
	}
	if want := `conflict with "kubectl-client-side-apply" using apps/v1`; se.ErrStatus.Details.Causes[0].Message != want {
		t.Errorf("cause %q, want %q", se.ErrStatus.Details.Causes[0].Message, want)
	}
}

func TestApplyUpgradeFromClientSideApply(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	last := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2}}`
	live := canon(t, dep)
	api.SetNestedField(live, map[string]any{LastAppliedAnnotation: last + "\n"}, "metadata", "annotations")
	if err := m.Update(nil, live, "kubectl-client-side-apply"); err != nil {
		t.Fatal(err)
	}
	api.SetNestedField(live, "uid", "metadata", "uid")
	out, _, err := m.Apply(live, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`), "kubectl", false)
	if err != nil {
		t.Fatalf("upgrade apply: %v", err)
	}
	if r, _ := api.NestedInt64(out, "spec", "replicas"); r != 3 {
		t.Errorf("replicas %d", r)
	}
	if got := api.NestedString(out, "metadata", "annotations", LastAppliedAnnotation); !contains(got, `"replicas":3`) {
		t.Errorf("last-applied not updated: %s", got)
	}
}

func TestBadApply(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	_, _, err := m.Apply(nil, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","managedFields":[]}}`), "a", false)
	if !apierrors.IsBadRequest(err) {
		t.Errorf("managedFields in apply: %v", err)
	}
	_, _, err = m.Apply(nil, obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"nope":1}}`), "a", false)
	if err == nil {
		t.Errorf("unknown field applied")
	}
}

func TestFieldsV1RoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`{}`,
		`{"f:a":{}}`,
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`,
		`{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}`,
		`{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}}}`,
		`{"f:list":{"i:0":{}}}`,
	} {
		set, err := ParseFieldsV1(obj(t, s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out, err := FieldsV1(set)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(obj(t, s), out); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", s, diff)
		}
	}
	for _, bad := range []any{"x", []any{}, map[string]any{"k:{": map[string]any{}}} {
		if _, err := ParseFieldsV1(bad); err == nil {
			t.Errorf("%v parsed", bad)
		}
	}
}

func FuzzParseFieldsV1(f *testing.F) {
	for _, s := range []string{`{}`, `{"f:a":{".":{},"f:b":{}}}`, `{"k:{\"name\":\"x\"}":{}}`, `{"v:1":{}}`, `{"i:3":{"f:x":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := api.DecodeMap(b)
		if err != nil {
			return
		}
		set, err := ParseFieldsV1(m)
		if err != nil {
			return
		}
		out, err := FieldsV1(set)
		if err != nil {
			t.Fatalf("encode a parsed set: %v", err)
		}
		again, err := ParseFieldsV1(out)
		if err != nil {
			t.Fatalf("parse own encoding %v: %v", out, err)
		}
		if !again.Equals(set) {
			t.Fatalf("round trip changed the set: %v vs %v", set, again)
		}
	})
}
