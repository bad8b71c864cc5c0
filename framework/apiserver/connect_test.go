package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// attachSub is a connect subresource (like pods/attach) that answers 200
// and counts the connections it served.
type attachSub struct{ served int }

func (*attachSub) Verbs() []string { return []string{"create", "get"} }
func (*attachSub) Kind() api.GroupVersionKind {
	return api.GroupVersionKind{Kind: "PodAttachOptions"}
}
func (s *attachSub) Serve(w http.ResponseWriter, _ *http.Request, _ registry.Parent) error {
	s.served++
	w.WriteHeader(http.StatusOK)
	return nil
}
func (*attachSub) ConnectOptions(r *http.Request) (map[string]any, error) {
	if r.URL.Query().Get("stdin") == "bad" {
		return nil, apierrors.NewBadRequest("invalid stdin")
	}
	return map[string]any{"apiVersion": "v1", "kind": "PodAttachOptions", "container": r.URL.Query().Get("container")}, nil
}

// TestConnectAdmission: a request to a registry.Connecter subresource passes
// the admission chain with operation CONNECT, the subresource's options kind
// and object, before it is served; a refusal keeps it from being served.
func TestConnectAdmission(t *testing.T) {
	sub := &attachSub{}
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "pods", Kind: "Pod",
		ListKind: "PodList", Singular: "pod", Namespaced: true,
		Strategy:     registry.Typed[benchConfigMap]{Validate: func(*benchConfigMap) field.ErrorList { return nil }},
		Subresources: map[string]registry.Subresource{"attach": sub},
	})
	var seen []admissionchain.Attributes
	check := func(_ context.Context, a *admissionchain.Attributes) error {
		seen = append(seen, *a)
		if api.NestedString(a.Object, "container") == "forbidden" {
			return apierrors.NewForbidden(api.GroupResource{Resource: "pods"}, a.Name, errors.New("attaching to this container is not allowed"))
		}
		return nil
	}
	sec := Security{Admission: &admissionchain.Chain{
		Mutators:   []admissionchain.Mutator{admissionchain.MutatorFunc(func(context.Context, *admissionchain.Attributes) error { return nil })},
		Validators: []admissionchain.Validator{admissionchain.ValidatorFunc(check)},
	}}
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard(), Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	do := func(query string) int {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/ns/pods/p/attach?"+query, nil))
		return rec.Code
	}

	if code := do("container=c1&stdin=true"); code != http.StatusOK || sub.served != 1 {
		t.Fatalf("allowed attach: code %d, served %d; want 200 and served", code, sub.served)
	}
	if len(seen) != 1 {
		t.Fatalf("admission saw %d requests, want 1", len(seen))
	}
	a := seen[0]
	if a.Operation != admissionchain.Connect || a.Kind != (api.GroupVersionKind{Version: "v1", Kind: "PodAttachOptions"}) ||
		a.Resource != (api.GroupVersionResource{Version: "v1", Resource: "pods"}) || a.Subresource != "attach" ||
		a.Name != "p" || a.Namespace != "ns" || api.NestedString(a.Object, "container") != "c1" || a.OldObject != nil {
		t.Errorf("admission attributes %+v", a)
	}
	if code := do("container=forbidden"); code != http.StatusForbidden || sub.served != 1 {
		t.Errorf("refused attach: code %d, served %d; want 403, not served", code, sub.served)
	}
	if code := do("stdin=bad"); code != http.StatusBadRequest || sub.served != 1 || len(seen) != 2 {
		t.Errorf("bad options: code %d, served %d, admitted %d; want 400 before admission", code, sub.served, len(seen))
	}
}
