package apiserver

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

type doohickey struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           doohickeySpec `json:"spec"`
}

type doohickeySpec struct {
	Replicas int             `json:"replicas,omitempty"`
	Parts    []doohickeyPart `json:"parts,omitempty"`
}

type doohickeyPart struct {
	Name string `json:"name"`
}

func TestFieldValidationReportsDuplicateFields(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Group: "example.com", Version: "v1"}, Resource: "doohickeys",
		Kind: "Doohickey", ListKind: "DoohickeyList", Singular: "doohickey", Strategy: registry.Typed[doohickey]{},
		Type: reflect.TypeFor[doohickey](),
	})
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	h := srv.Handler()
	post := func(name, validation, media, body string) *httptest.ResponseRecorder {
		path := "/apis/example.com/v1/doohickeys"
		if validation != "" {
			path += "?fieldValidation=" + validation
		}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(strings.ReplaceAll(body, "NAME", name)))
		req.Header.Set("Content-Type", media)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	const dupJSON = `{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"NAME"},
		"spec":{"unknownField":"foo","replicas":2,"replicas":3,"parts":[{"name":"a","name":"b"}]}}`

	rec := post("strict", "Strict", "application/json", dupJSON)
	want := `strict decoding error: unknown field \"spec.unknownField\", duplicate field \"spec.replicas\", duplicate field \"spec.parts[0].name\"`
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("Strict: %d %s, want 400 with %s", rec.Code, rec.Body.String(), want)
	}

	rec = post("warn", "Warn", "application/json", dupJSON)
	if rec.Code != http.StatusCreated {
		t.Fatalf("Warn: %d %s", rec.Code, rec.Body.String())
	}
	warnings := strings.Join(rec.Result().Header.Values("Warning"), "\n")
	for _, w := range []string{`unknown field \"spec.unknownField\"`, `duplicate field \"spec.replicas\"`, `duplicate field \"spec.parts[0].name\"`} {
		if !strings.Contains(warnings, w) {
			t.Errorf("Warn: warnings %q lack %s", warnings, w)
		}
	}
	if !strings.Contains(rec.Body.String(), `"replicas":3`) {
		t.Errorf("the last duplicate should win: %s", rec.Body.String())
	}

	rec = post("ignore", "Ignore", "application/json", dupJSON)
	if rec.Code != http.StatusCreated || len(rec.Result().Header.Values("Warning")) != 0 {
		t.Errorf("Ignore: %d, warnings %v", rec.Code, rec.Result().Header.Values("Warning"))
	}

	const dupYAML = "apiVersion: example.com/v1\nkind: Doohickey\nmetadata:\n  name: NAME\nspec:\n  replicas: 2\n  replicas: 3\n"
	rec = post("yaml", "Strict", "application/yaml", dupYAML)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `line 7: key \"replicas\" already set in map`) {
		t.Errorf("Strict YAML: %d %s", rec.Code, rec.Body.String())
	}
	rec = post("yaml-warn", "", "application/yaml", dupYAML)
	if rec.Code != http.StatusCreated || !strings.Contains(strings.Join(rec.Result().Header.Values("Warning"), ""), "already set in map") {
		t.Errorf("default (Warn) YAML: %d, warnings %v", rec.Code, rec.Result().Header.Values("Warning"))
	}
}
