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

// encodedCreateServer serves ConfigMap-like objects over store. admit adds
// an admission chain whose plugin fails the test unless it sees managedFields
// decoded (so its server builds the creator's entry decoded, the reference
// here); prepare uses a strategy that prepares creates.
func encodedCreateServer(t *testing.T, store storage.Interface, admit, prepare bool) http.Handler {
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
	if admit {
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

// TestCreateEncodedManagedFields: a create on a server without admission
// builds its creator's managedFields entry as the bytes stored
// (fieldmanager.UpdateEncoded); it stores and answers, byte for byte, what
// the decoded entry of a server with admission does (uid and times aside),
// dry runs included, and code that reads the object before it is encoded (a
// strategy that prepares creates) sees the entry decoded.
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
		encStore, decStore := newMemStore(), newMemStore()
		enc := encodedCreateServer(t, encStore, false, prepare)
		dec := encodedCreateServer(t, decStore, true, prepare)
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
					got := serve(t, enc, http.MethodPost, path, mediaJSON, b, http.StatusCreated).Body.Bytes()
					want := serve(t, dec, http.MethodPost, path, mediaJSON, b, http.StatusCreated).Body.Bytes()
					if g, w := withoutServerValues(got), withoutServerValues(want); g != w {
						t.Fatalf("POST %s %s answered\n%s\nwant\n%s", path, b, g, w)
					}
					if dry != "" {
						continue
					}
					key := "/registry/core/configmaps/default/" + name
					gkv, err := encStore.Get(t.Context(), key)
					if err != nil {
						t.Fatal(err)
					}
					wkv, err := decStore.Get(t.Context(), key)
					if err != nil {
						t.Fatal(err)
					}
					if g, w := withoutServerValues(gkv.Value), withoutServerValues(wkv.Value); g != w {
						t.Fatalf("POST %s %s stored\n%s\nwant\n%s", path, b, g, w)
					}
					if strings.Contains(b, `"data":{"k"`) && !strings.Contains(string(gkv.Value), `"f:z\u003c":{}`) {
						t.Fatalf("stored %s: no entry for the data sent", gkv.Value)
					}
				}
			}
		}
	}
}
