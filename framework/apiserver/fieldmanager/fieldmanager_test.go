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
		// The direct encoding is structured-merge-diff's own.
		b, err := set.ToJSON()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(obj(t, string(b)), out); diff != "" {
			t.Errorf("%s: FieldsV1 differs from Set.ToJSON (-want +got):\n%s", s, diff)
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
		ref, err := set.ToJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := api.DecodeMap(ref); !reflect.DeepEqual(want, out) {
			t.Fatalf("FieldsV1 %v differs from Set.ToJSON %s", out, ref)
		}
		if !again.Equals(set) {
			t.Fatalf("round trip changed the set: %v vs %v", set, again)
		}
	})
}

func TestPrintManager(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   identity
		want string
	}{
		{identity{Manager: "kubectl", Operation: OperationApply}, `"kubectl"`},
		{identity{Manager: "kubectl-client-side-apply", Operation: OperationUpdate, APIVersion: "apps/v1"}, `"kubectl-client-side-apply" using apps/v1`},
		{identity{Manager: "ctrl", Operation: OperationUpdate, APIVersion: "v1", Subresource: "status"}, `"ctrl" with subresource "status" using v1`},
		{identity{Manager: "x", Operation: OperationApply, Subresource: "scale"}, `"x" with subresource "scale"`},
	} {
		if got := printManager(tc.id.key()); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.id, got, tc.want)
		}
	}
	if got := printManager("not json"); got != `"not json"` {
		t.Errorf("raw key: %s", got)
	}
}

// TestListSemantics checks what each marker makes of a list, through the
// field sets an Update records.
func TestListSemantics(t *testing.T) {
	t.Parallel()
	type item struct {
		Name string `json:"name"`
		Port int    `json:"port,omitempty"`
		Prot string `json:"prot,omitempty" default:"TCP"`
	}
	type spec struct {
		Atomic    []item             `json:"atomic,omitempty"`
		Merge     []item             `json:"merge,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
		Map       []item             `json:"map,omitempty" listType:"map" listMapKeys:"port,prot"`
		Set       []string           `json:"set,omitempty" patchStrategy:"merge"`
		ListSet   []string           `json:"listSet,omitempty" listType:"set"`
		Plain     []string           `json:"plain,omitempty"`
		AtomicMap map[string]string  `json:"atomicMap,omitempty" mapType:"atomic"`
		Granular  map[string]string  `json:"granular,omitempty"`
		Sel       *api.LabelSelector `json:"sel,omitempty"`
		AtomicS   *item              `json:"atomicS,omitempty" structType:"atomic"`
	}
	type kind struct {
		api.TypeMeta   `json:",inline"`
		api.ObjectMeta `json:"metadata,omitempty"`
		Spec           spec `json:"spec"`
	}
	typ, err := TypeOf(reflect.TypeFor[kind]())
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Type: typ, APIVersion: "x/v1", Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ field, value, want string }{
		{"atomic", `[{"name":"a"}]`, `{"f:atomic":{}}`},
		{"merge", `[{"name":"a","port":1}]`, `{"f:merge":{".":{},"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:port":{}}}}`},
		{"map", `[{"name":"a","port":1}]`, `{"f:map":{".":{},"k:{\"port\":1,\"prot\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}}}}`},
		{"set", `["b","a"]`, `{"f:set":{".":{},"v:\"a\"":{},"v:\"b\"":{}}}`},
		{"listSet", `["a"]`, `{"f:listSet":{".":{},"v:\"a\"":{}}}`},
		{"plain", `["a"]`, `{"f:plain":{}}`},
		{"atomicMap", `{"k":"v"}`, `{"f:atomicMap":{}}`},
		{"granular", `{"k":"v"}`, `{"f:granular":{".":{},"f:k":{}}}`},
		{"sel", `{"matchLabels":{"k":"v"}}`, `{"f:sel":{}}`},
		{"atomicS", `{"name":"a"}`, `{"f:atomicS":{}}`},
	} {
		o := obj(t, `{"apiVersion":"x/v1","kind":"K","metadata":{"name":"n"},"spec":{"`+tc.field+`":`+tc.value+`}}`)
		if err := m.Update(nil, o, "m"); err != nil {
			t.Fatalf("%s: %v", tc.field, err)
		}
		got, _ := json.Marshal(api.NestedSlice(o, "metadata", "managedFields")[0].(map[string]any)["fieldsV1"])
		if want := `{"f:spec":` + tc.want + `}`; string(got) != want {
			t.Errorf("%s: got %s, want %s", tc.field, got, want)
		}
	}
}

// TestUpdateWithoutChangeKeepsEntries: an update that changes no field
// renews no time, so the stored bytes stay the same and nothing is written.
func TestUpdateWithoutChangeKeepsEntries(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Ignore: []string{"status"}})
	live := canon(t, dep)
	if err := m.Update(nil, live, "a"); err != nil {
		t.Fatal(err)
	}
	api.SetNestedField(live, "uid", "metadata", "uid")
	typ, err := TypeOf(reflect.TypeFor[deployment]())
	if err != nil {
		t.Fatal(err)
	}
	later, err := New(Options{Type: typ, APIVersion: "apps/v1", Ignore: []string{"status"}, Now: func() time.Time { return fixed.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, manager := range []string{"a", "b"} {
		next := api.DeepCopyJSON(live)
		if err := later.Update(live, next, manager); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(entries(t, live), entries(t, next)); diff != "" {
			t.Errorf("no-op update by %s changed managedFields (-want +got):\n%s", manager, diff)
		}
	}
}

func TestJSONEqual(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"a":[1,"x",true,null,{"b":1.5}]}`, `{"a":[1,"x",true,null,{"b":1.5}]}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`{"a":[1]}`, `{"a":[1,2]}`, false},
		{`{"a":1}`, `{"a":1.5}`, false},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`{"a":null}`, `{"b":null}`, false},
		{`{"a":{}}`, `{"a":[]}`, false},
	} {
		if got := jsonEqual(obj(t, tc.a), obj(t, tc.b)); got != tc.want {
			t.Errorf("%s vs %s: got %v", tc.a, tc.b, got)
		}
	}
	// The same list is equal to itself; a list sharing its start is not
	// the same list when shorter.
	l := []any{"a", map[string]any{"b": int64(1)}}
	if !jsonEqual(l, l) || jsonEqual(l, l[:1]) || jsonEqual(l[:1], l) {
		t.Error("lists sharing an array")
	}
}

func TestIdentityKey(t *testing.T) {
	t.Parallel()
	for _, id := range []identity{
		{Manager: "kubectl", Operation: OperationApply, APIVersion: "apps/v1"},
		{Manager: "kube-controller-manager", Operation: OperationUpdate, APIVersion: "apps/v1", Subresource: "status"},
		{Manager: `odd "name" \ <é>`, Operation: OperationUpdate, APIVersion: "v1"},
		{Operation: OperationUpdate, APIVersion: "v1"},
	} {
		want := id
		if want.Operation == OperationApply {
			want.APIVersion = ""
		}
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := id.key(); got != string(b) {
			t.Errorf("%+v: key %s, want %s", id, got, b)
		}
		if back := parseKey(id.key()); back != want {
			t.Errorf("%+v: parsed back as %+v", id, back)
		}
	}
}
