package apiserver

import (
	"context"
	"fmt"
	"net/http"
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

// How encodedCreateServer's server admits creates.
type admitMode int

const (
	noAdmission admitMode = iota
	checkingAdmission
	copyingAdmission
)

// encodedCreateServer serves ConfigMap-like objects over store. With
// checkingAdmission its plugins fail the test unless they see managedFields
// decoded; with copyingAdmission a plugin replaces them by a copy (so the
// server encodes decoded entries, the reference); prepare uses a strategy
// that prepares creates.
func encodedCreateServer(t *testing.T, store storage.Interface, admit admitMode, prepare bool) http.Handler {
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
	for _, prepare := range []bool{false, true} {
		stores := []*memStore{newMemStore(), newMemStore(), newMemStore()}
		servers := []http.Handler{
			encodedCreateServer(t, stores[0], copyingAdmission, prepare), // the reference
			encodedCreateServer(t, stores[1], noAdmission, prepare),
			encodedCreateServer(t, stores[2], checkingAdmission, prepare),
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
					}
				}
			}
		}
	}
}
