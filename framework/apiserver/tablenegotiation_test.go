package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

func TestOnlyTransformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept string
		want   bool
	}{
		{"application/json;as=Table;v=v1;g=meta.k8s.io", true},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1beta1;g=meta.k8s.io", true},
		{"application/json; as=PartialObjectMetadata; v=v1; g=meta.k8s.io", true},
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json", false},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, */*", false},
		{"application/json", false},
		{"application/json;class=as=x", false},
	}
	for _, tt := range tests {
		if got := onlyTransformed(tt.accept); got != tt.want {
			t.Errorf("onlyTransformed(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}

// TestTableOfVirtualResource: a Table request to a create-only (virtual)
// resource gets 406, with or without request filters, before the resource's
// handler runs; other requests pass.
func TestTableOfVirtualResource(t *testing.T) {
	t.Parallel()
	gv := api.GroupVersion{Group: "example.com", Version: "v1"}
	reg := registry.New()
	reg.Add(&registry.Resource{GroupVersion: gv, Resource: "reviews", Kind: "Review", ListKind: "ReviewList",
		Singular: "review", Verbs: []string{"create"}, Strategy: registry.Typed[struct{}]{}})
	reg.Add(&registry.Resource{GroupVersion: gv, Resource: "widgets", Kind: "Widget", ListKind: "WidgetList",
		Singular: "widget", Strategy: &admitStrategy{}})
	// The virtual resource's own handler, as builtin/security installs it.
	virtual := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/reviews") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"apiVersion":"example.com/v1","kind":"Review","status":{"allowed":true}}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, filtered := range []bool{false, true} {
		opts := Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard()}
		if filtered {
			opts.Security.Filters = filters.Options{Inner: virtual}
		}
		srv, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		srv.Start(t.Context())
		h := srv.Handler()
		tests := []struct {
			method, path, accept string
			want                 int
		}{
			{http.MethodPost, "/apis/example.com/v1/reviews", table, http.StatusNotAcceptable},
			{http.MethodPost, "/apis/example.com/v1/reviews", table + ", application/json", http.StatusCreated},
			{http.MethodPost, "/apis/example.com/v1/reviews", "application/json", http.StatusCreated},
			{http.MethodPost, "/apis/example.com/v1/widgets", table, 0}, // stored objects: not refused
		}
		for _, tt := range tests {
			if !filtered && tt.want == http.StatusCreated {
				continue // no virtual handler without filters
			}
			body := `{"apiVersion":"example.com/v1","kind":"Review"}`
			if strings.HasSuffix(tt.path, "/widgets") {
				body = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{}}`
			}
			req := httptest.NewRequestWithContext(t.Context(), tt.method, tt.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tt.accept)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.want == 0 {
				if rec.Code == http.StatusNotAcceptable || rec.Code >= 500 {
					t.Errorf("filtered=%v %s %s Accept %q: %d %s", filtered, tt.method, tt.path, tt.accept, rec.Code, rec.Body)
				}
				continue
			}
			if rec.Code != tt.want {
				t.Errorf("filtered=%v %s %s Accept %q: %d %s, want %d", filtered, tt.method, tt.path, tt.accept, rec.Code, rec.Body, tt.want)
				continue
			}
			if tt.want == http.StatusNotAcceptable {
				var st map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
					t.Fatal(err)
				}
				if st["kind"] != "Status" || st["reason"] != "NotAcceptable" || st["code"] != float64(406) ||
					st["message"] != notTransformableMessage {
					t.Errorf("406 body: %v", st)
				}
			}
		}
	}
}
