package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// preparedConfigMaps is a ConfigMap-like strategy that prepares creates and
// fails them unless the object's managedFields are decoded JSON.
type preparedConfigMaps struct {
	registry.Typed[benchConfigMap]
	t *testing.T
}

func (p preparedConfigMaps) PrepareForCreate(obj map[string]any) {
	if mf, ok := api.NestedField(obj, "metadata", "managedFields"); ok {
		if _, decoded := mf.([]any); !decoded {
			p.t.Errorf("PrepareForCreate saw managedFields %T", mf)
		}
	}
}

func (preparedConfigMaps) PrepareForUpdate(map[string]any, map[string]any) {}

// copyingMutator replaces the object's managedFields by a copy and reports
// no change: the server then encodes the copy, decoded entries (the
// reference of TestCreateEncodedManagedFields).
type copyingMutator struct{}

func (copyingMutator) Admit(ctx context.Context, a *admissionchain.Attributes) error {
	_, err := copyingMutator{}.AdmitReport(ctx, a)
	return err
}

func (copyingMutator) AdmitReport(_ context.Context, a *admissionchain.Attributes) (bool, error) {
	if meta, ok := a.Object["metadata"].(map[string]any); ok {
		if mf, ok := meta["managedFields"]; ok {
			meta["managedFields"] = api.DeepCopyJSONValue(mf)
		}
	}
	return false, nil
}

// annotatingMutator adds an annotation to every object (a change after the
// creator's entry is computed, which the entry does not own).
type annotatingMutator struct{ ignoresManagedFields bool }

func (m annotatingMutator) Admit(ctx context.Context, a *admissionchain.Attributes) error {
	api.SetNestedField(a.Object, "yes", "metadata", "annotations", "admitted")
	return nil
}

func (m annotatingMutator) MayReadManagedFields(context.Context, *admissionchain.Attributes) bool {
	return !m.ignoresManagedFields
}

// ignoringPlugin says it ignores managedFields and fails the test if it
// sees them as anything but decoded JSON (entries a client sent and the
// server keeps as such); the creator's entry is kept from it.
type ignoringPlugin struct{ t *testing.T }

func (p ignoringPlugin) check(a *admissionchain.Attributes) error {
	if mf, ok := api.NestedField(a.Object, "metadata", "managedFields"); ok {
		if _, decoded := mf.([]any); !decoded {
			p.t.Errorf("a plugin that ignores managedFields saw them as %T", mf)
		}
	}
	return nil
}

func (p ignoringPlugin) AdmitReport(_ context.Context, a *admissionchain.Attributes) (bool, error) {
	return false, p.check(a)
}
func (p ignoringPlugin) Admit(ctx context.Context, a *admissionchain.Attributes) error {
	_, err := p.AdmitReport(ctx, a)
	return err
}
func (p ignoringPlugin) Validate(_ context.Context, a *admissionchain.Attributes) error {
	return p.check(a)
}
func (ignoringPlugin) MayReadManagedFields(context.Context, *admissionchain.Attributes) bool {
	return false
}

// How encodedCreateServer's server admits creates.
type admitMode int

const (
	noAdmission admitMode = iota
	checkingAdmission
	copyingAdmission
	ignoringAdmission // plugins that ignore managedFields (admission.ManagedFieldsScoper)
)

// encodedCreateServer serves ConfigMap-like objects over store. With
// checkingAdmission its plugins fail the test unless they see managedFields
// decoded; with copyingAdmission a plugin replaces them by a copy (so the
// server encodes decoded entries, the reference); prepare uses a strategy
// that prepares creates.
func encodedCreateServer(t *testing.T, store storage.Interface, admit admitMode, prepare bool) http.Handler {
	return encodedCreateServerAnnotating(t, store, admit, prepare, false)
}

// encodedCreateServerAnnotating is encodedCreateServer whose admission
// chain, with annotate, starts with an annotatingMutator.
func encodedCreateServerAnnotating(t *testing.T, store storage.Interface, admit admitMode, prepare, annotate bool) http.Handler {
	t.Helper()
	var st registry.Strategy = registry.Typed[benchConfigMap]{Validate: func(*benchConfigMap) field.ErrorList { return nil }}
	if prepare {
		st = preparedConfigMaps{Typed: st.(registry.Typed[benchConfigMap]), t: t}
	}
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		ListKind: "ConfigMapList", Singular: "configmap", Namespaced: true, Strategy: st,
	})
	var sec Security
	switch admit {
	case copyingAdmission:
		sec.Admission = &admissionchain.Chain{Mutators: []admissionchain.Mutator{copyingMutator{}}}
	case checkingAdmission:
		check := func(_ context.Context, a *admissionchain.Attributes) error {
			if mf, ok := api.NestedField(a.Object, "metadata", "managedFields"); ok {
				if _, decoded := mf.([]any); !decoded {
					t.Errorf("admission saw managedFields %T", mf)
				}
			}
			return nil
		}
		sec.Admission = &admissionchain.Chain{
			Mutators:   []admissionchain.Mutator{admissionchain.MutatorFunc(check)},
			Validators: []admissionchain.Validator{admissionchain.ValidatorFunc(check)},
		}
	case ignoringAdmission:
		p := ignoringPlugin{t: t}
		sec.Admission = &admissionchain.Chain{Mutators: []admissionchain.Mutator{p}, Validators: []admissionchain.Validator{p}}
	}
	if annotate {
		if sec.Admission == nil {
			sec.Admission = &admissionchain.Chain{}
		}
		sec.Admission.Mutators = append([]admissionchain.Mutator{annotatingMutator{ignoresManagedFields: admit == ignoringAdmission}},
			sec.Admission.Mutators...)
	}
	srv, err := New(Options{Storage: store, Registry: reg, Logger: logr.Discard(), Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	return srv.Handler()
}

// serverValues are what two servers write apart for the same create: the
// uid, creationTimestamp and managedFields times.
var serverValues = regexp.MustCompile(`"uid":"[0-9a-f-]{36}"|"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)

func withoutServerValues(b []byte) string {
	return serverValues.ReplaceAllStringFunc(string(b), func(s string) string {
		if strings.HasPrefix(s, `"uid"`) {
			return `"uid":"UID"`
		}
		return `"TIME"`
	})
}

// TestCreateEncodedManagedFields: a create builds its creator's
// managedFields entry as the bytes stored (fieldmanager.UpdateEncoded), left
// in the object when nothing reads it before it is encoded, else put in
// place of the decoded entry afterwards; it stores and answers, byte for
// byte, what encoding the decoded entry does (uid and times aside), dry runs
// included, and admission and a strategy that prepares creates see the entry
// decoded.
func TestCreateEncodedManagedFields(t *testing.T) {
	bodies := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","labels":{"app":"x","tier":"web"},` +
			`"annotations":{"example.com/a":"<é>","k":"v"},"finalizers":["x/y","a"],"ownerReferences":[` +
			`{"apiVersion":"v1","kind":"K","name":"o","uid":"u1"},{"apiVersion":"v1","kind":"K","name":"p","uid":"u0"}]},` +
			`"data":{"k":"v","z<":"1","é":"2","\u2028":"3","q\"":"4"},"binaryData":{"b":"AAE="},"immutable":false}`,
		`{"metadata":{"name":"%s"}}`,
		`{"metadata":{"name":"%s","labels":{}},"data":{}}`,
		`{"metadata":{"name":"%s","managedFields":[]},"data":{"a":"1"}}`,
		`{"metadata":{"name":"%s","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1",` +
			`"fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]},"data":{"a":"1"}}`,
	}
	managers := []string{"?fieldManager=bench", "?fieldManager=a%3Cb%3E%22", ""}
	// The first server of each group is the reference; with annotate every
	// chain changes the object after the entry is computed.
	groups := []struct {
		annotate bool
		modes    []admitMode
	}{
		{false, []admitMode{copyingAdmission, noAdmission, checkingAdmission, ignoringAdmission}},
		{true, []admitMode{copyingAdmission, checkingAdmission, ignoringAdmission}},
	}
	for _, prepare := range []bool{false, true} {
		for _, g := range groups {
			testEncodedCreates(t, bodies, managers, prepare, g.annotate, g.modes)
		}
	}
}

func testEncodedCreates(t *testing.T, bodies, managers []string, prepare, annotate bool, modes []admitMode) {
	{
		var stores []*memStore
		var servers []http.Handler
		for _, m := range modes {
			st := newMemStore()
			stores = append(stores, st)
			servers = append(servers, encodedCreateServerAnnotating(t, st, m, prepare, annotate))
		}
		n := 0
		for _, body := range bodies {
			for _, mgr := range managers {
				for _, dry := range []string{"", "dryRun=All"} {
					n++
					name := fmt.Sprintf("cm-%d", n)
					path := "/api/v1/namespaces/default/configmaps" + mgr
					if dry != "" {
						if mgr == "" {
							path += "?" + dry
						} else {
							path += "&" + dry
						}
					}
					b := strings.Replace(body, "%s", name, 1)
					var want string
					for i, h := range servers {
						got := withoutServerValues(serve(t, h, http.MethodPost, path, mediaJSON, b, http.StatusCreated).Body.Bytes())
						if i == 0 {
							want = got
						} else if got != want {
							t.Fatalf("server %d: POST %s %s answered\n%s\nwant\n%s", i, path, b, got, want)
						}
					}
					if dry != "" {
						continue
					}
					for i, st := range stores {
						kv, err := st.Get(t.Context(), "/registry/core/configmaps/default/"+name)
						if err != nil {
							t.Fatal(err)
						}
						got := withoutServerValues(kv.Value)
						if i == 0 {
							want = got
						} else if got != want {
							t.Fatalf("server %d: POST %s %s stored\n%s\nwant\n%s", i, path, b, got, want)
						}
						if strings.Contains(b, `"data":{"k"`) && !strings.Contains(got, `"f:z\u003c":{}`) {
							t.Fatalf("stored %s: no entry for the data sent", got)
						}
						if annotate && (!strings.Contains(got, `"admitted":"yes"`) || strings.Contains(got, `"f:admitted"`)) {
							t.Fatalf("stored %s: the annotation admission adds missing or owned", got)
						}
					}
				}
			}
		}
	}
}

// managedFieldsMutator sets the managedFields of objects annotated
// "mf": "invalid" to an entry Kubernetes refuses and of those annotated
// "mf": "valid" to another valid entry, as a mutating webhook may.
type managedFieldsMutator struct{}

func (managedFieldsMutator) Admit(_ context.Context, a *admissionchain.Attributes) error {
	entry := map[string]any{"manager": "webhook", "operation": "Update", "apiVersion": "v1",
		"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}
	switch api.NestedString(a.Object, "metadata", "annotations", "mf") {
	case "invalid":
		entry["operation"] = "Bogus"
	case "valid":
	default:
		return nil
	}
	api.SetNestedField(a.Object, []any{entry}, "metadata", "managedFields")
	return nil
}

// TestAdmissionChangesManagedFields: managedFields a mutating admission
// plugin changes are kept when valid, and reset to what they were before
// admission, with Kubernetes' warning, when not; on creates and updates.
func TestAdmissionChangesManagedFields(t *testing.T) {
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		ListKind: "ConfigMapList", Singular: "configmap", Namespaced: true,
		Strategy: registry.Typed[benchConfigMap]{Validate: func(*benchConfigMap) field.ErrorList { return nil }},
	})
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard(),
		Security: Security{Admission: &admissionchain.Chain{Mutators: []admissionchain.Mutator{managedFieldsMutator{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	h := srv.Handler()
	const warning = ".metadata.managedFields was in an invalid state after admission"
	managers := func(rec *httptest.ResponseRecorder) string {
		obj, err := api.DecodeMap(rec.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range api.NestedSlice(obj, "metadata", "managedFields") {
			em, _ := e.(map[string]any)
			out = append(out, fmt.Sprintf("%v/%v", em["manager"], em["operation"]))
		}
		return strings.Join(out, ",")
	}
	path := "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		mf, want string
		warns    bool
	}{
		{"invalid", "creator/Update", true},
		{"valid", "webhook/Update", false},
		{"none", "creator/Update", false},
	} {
		body := fmt.Sprintf(`{"metadata":{"name":"cm-%s","annotations":{"mf":%q}},"data":{"a":"1"}}`, tc.mf, tc.mf)
		rec := serve(t, h, http.MethodPost, path+"?fieldManager=creator", mediaJSON, body, http.StatusCreated)
		if got := managers(rec); got != tc.want {
			t.Errorf("create %q: managedFields of %s, want %s", tc.mf, got, tc.want)
		}
		if got := strings.Contains(strings.Join(rec.Header().Values("Warning"), "\n"), warning); got != tc.warns {
			t.Errorf("create %q: warned %v (%q)", tc.mf, got, rec.Header().Values("Warning"))
		}
	}
	// Updates: the object stored with the creator's entry, then annotated.
	for _, tc := range []struct {
		mf, want string
		warns    bool
	}{
		{"invalid", "creator/Update,updater/Update", true},
		{"valid", "webhook/Update", false},
	} {
		name := "cm-up-" + tc.mf
		serve(t, h, http.MethodPost, path+"?fieldManager=creator", mediaJSON,
			fmt.Sprintf(`{"metadata":{"name":%q},"data":{"a":"1"}}`, name), http.StatusCreated)
		rec := serve(t, h, http.MethodPatch, path+"/"+name+"?fieldManager=updater", "application/merge-patch+json",
			fmt.Sprintf(`{"metadata":{"annotations":{"mf":%q}}}`, tc.mf), http.StatusOK)
		if got := managers(rec); got != tc.want {
			t.Errorf("update %q: managedFields of %s, want %s", tc.mf, got, tc.want)
		}
		if got := strings.Contains(strings.Join(rec.Header().Values("Warning"), "\n"), warning); got != tc.warns {
			t.Errorf("update %q: warned %v (%q)", tc.mf, got, rec.Header().Values("Warning"))
		}
	}
}
