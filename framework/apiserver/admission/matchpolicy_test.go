package admission

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// widgets are served as example.com/v1 (spec.replicas) and example.com/v2
// (spec.size).
func convertWidget(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	from, to2 := "size", "replicas"
	if to.Version == "v2" {
		from, to2 = "replicas", "size"
	}
	if v, ok := spec[from]; ok {
		spec[to2] = v
		delete(spec, from)
	}
	obj["apiVersion"] = to.String()
	return obj, nil
}

func widgetEquivalents(gvr api.GroupVersionResource) []EquivalentResource {
	if gvr.Group != "example.com" || gvr.Resource != "widgets" {
		return nil
	}
	other := "v1"
	if gvr.Version == "v1" {
		other = "v2"
	}
	return []EquivalentResource{{
		Resource: api.GroupVersionResource{Group: "example.com", Version: other, Resource: "widgets"},
		Kind:     api.GroupVersionKind{Group: "example.com", Version: other, Kind: "Widget"},
		Convert:  convertWidget,
	}}
}

// webhookServer answers AdmissionReviews with respond and records the requests.
type webhookServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []review.AdmissionRequest
}

func newWebhookServer(t *testing.T, respond func(*review.AdmissionRequest) *review.AdmissionResponse) *webhookServer {
	t.Helper()
	ws := &webhookServer{}
	ws.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in review.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ws.mu.Lock()
		ws.reqs = append(ws.reqs, *in.Request)
		ws.mu.Unlock()
		resp := respond(in.Request)
		resp.UID = in.Request.UID
		_ = json.NewEncoder(w).Encode(review.AdmissionReview{APIVersion: review.AdmissionAPIVersion, Kind: review.AdmissionKind, Response: resp})
	}))
	t.Cleanup(ws.Close)
	return ws
}

// decoded is an object of a sent AdmissionRequest (nil when absent or not JSON).
func decoded(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func (ws *webhookServer) requests() []review.AdmissionRequest {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]review.AdmissionRequest(nil), ws.reqs...)
}

func (ws *webhookServer) hook(policy string) Hook {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ws.Certificate().Raw})
	return Hook{Name: "widgets.example.com", URL: ws.URL, CABundle: ca, FailurePolicy: "Fail", SideEffects: "None", MatchPolicy: policy,
		Rules: []Rule{{Operations: []string{"CREATE", "UPDATE"}, APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}, Scope: "*"}}}
}

func widgetV2(size int64) *Attributes {
	return &Attributes{Operation: Create, Namespaced: true, Namespace: "default", Name: "w",
		Resource: api.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"},
		Kind:     api.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"},
		Object: map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": map[string]any{"size": size}}}
}

func TestMatchPolicyEquivalentMutating(t *testing.T) {
	t.Parallel()
	jsonPatch := "JSONPatch"
	ws := newWebhookServer(t, func(r *review.AdmissionRequest) *review.AdmissionResponse {
		return &review.AdmissionResponse{Allowed: true, PatchType: &jsonPatch,
			Patch: []byte(`[{"op":"replace","path":"/spec/replicas","value":5},{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`)}
	})
	for _, policy := range []string{"", "Equivalent", "Exact"} {
		hook := ws.hook(policy)
		w := &Webhooks{Mutating: true, Hooks: func(context.Context) ([]Hook, error) { return []Hook{hook}, nil }, Equivalents: widgetEquivalents}
		a := widgetV2(2)
		before := len(ws.requests())
		changed, err := w.AdmitReport(context.Background(), a)
		if err != nil {
			t.Fatalf("%q: %v", policy, err)
		}
		reqs := ws.requests()[before:]
		if policy == "Exact" {
			if len(reqs) != 0 || changed {
				t.Errorf("Exact: the webhook for v1 was called for v2 (%d calls, changed %v)", len(reqs), changed)
			}
			continue
		}
		if len(reqs) != 1 {
			t.Fatalf("%q: %d calls, want 1", policy, len(reqs))
		}
		r := reqs[0]
		if r.Kind != (review.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}) ||
			r.Resource != (review.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}) {
			t.Errorf("%q: sent kind %v resource %v, want v1", policy, r.Kind, r.Resource)
		}
		if *r.RequestKind != (review.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}) ||
			*r.RequestResource != (review.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}) {
			t.Errorf("%q: requestKind %v requestResource %v, want v2", policy, r.RequestKind, r.RequestResource)
		}
		if decoded(r.Object)["apiVersion"] != "example.com/v1" || api.NestedMap(decoded(r.Object), "spec")["replicas"] != float64(2) {
			t.Errorf("%q: sent object %v, want it in v1", policy, decoded(r.Object))
		}
		if !changed || a.Object["apiVersion"] != "example.com/v2" {
			t.Fatalf("%q: changed %v, object %v: want the patched object back in v2", policy, changed, a.Object)
		}
		spec := api.NestedMap(a.Object, "spec")
		if fmt.Sprint(spec["size"]) != "5" || spec["replicas"] != nil {
			t.Errorf("%q: spec %v, want size 5", policy, spec)
		}
		if api.NestedStringMap(a.Object, "metadata", "labels")["mutated"] != "yes" {
			t.Errorf("%q: labels %v", policy, a.Object["metadata"])
		}
	}
}

func TestMatchPolicyEquivalentValidating(t *testing.T) {
	t.Parallel()
	ws := newWebhookServer(t, func(r *review.AdmissionRequest) *review.AdmissionResponse {
		if api.NestedMap(decoded(r.Object), "spec")["replicas"] == float64(13) {
			return &review.AdmissionResponse{Allowed: false, Result: &api.Status{Message: "13 is unlucky", Code: 403}}
		}
		return &review.AdmissionResponse{Allowed: true}
	})
	tests := []struct {
		policy  string
		size    int64
		wantErr string
	}{
		{"Equivalent", 13, `admission webhook "widgets.example.com" denied the request: 13 is unlucky`},
		{"Equivalent", 3, ""},
		{"Exact", 13, ""},
	}
	for _, tt := range tests {
		hook := ws.hook(tt.policy)
		w := &Webhooks{Hooks: func(context.Context) ([]Hook, error) { return []Hook{hook}, nil }, Equivalents: widgetEquivalents}
		a := widgetV2(tt.size)
		err := w.Validate(context.Background(), a)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s size %d: %v", tt.policy, tt.size, err)
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr || apierrors.CodeForError(err) != 403):
			t.Errorf("%s size %d: error %v, want %q (403)", tt.policy, tt.size, err, tt.wantErr)
		}
		if a.Object["apiVersion"] != "example.com/v2" {
			t.Errorf("%s: the validated object changed version: %v", tt.policy, a.Object)
		}
	}
}

func TestMatchPolicyExactMatchNotConverted(t *testing.T) {
	t.Parallel()
	ws := newWebhookServer(t, func(*review.AdmissionRequest) *review.AdmissionResponse {
		return &review.AdmissionResponse{Allowed: true}
	})
	hook := ws.hook("Equivalent")
	hook.Rules[0].APIVersions = []string{"*"}
	w := &Webhooks{Hooks: func(context.Context) ([]Hook, error) { return []Hook{hook}, nil }, Equivalents: widgetEquivalents}
	if err := w.Validate(context.Background(), widgetV2(1)); err != nil {
		t.Fatal(err)
	}
	r := ws.requests()[0]
	if r.Kind.Version != "v2" || r.RequestKind.Version != "v2" || decoded(r.Object)["apiVersion"] != "example.com/v2" {
		t.Errorf("a direct match was converted: kind %v requestKind %v object %v", r.Kind, r.RequestKind, decoded(r.Object)["apiVersion"])
	}
}

func TestRegistryEquivalents(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	add := func(group, version, resource, kind, storage string, convert bool) {
		r := &registry.Resource{GroupVersion: api.GroupVersion{Group: group, Version: version}, Resource: resource, Kind: kind,
			Namespaced: true, StorageVersion: storage}
		if convert {
			r.Convert = convertWidget
		}
		reg.Add(r)
	}
	add("example.com", "v1", "widgets", "Widget", "v2", true)
	add("example.com", "v2", "widgets", "Widget", "v2", true)
	add("example.com", "v3", "widgets", "Widget", "v2", true)
	add("example.com", "v1", "gadgets", "Gadget", "", false)
	add("other.com", "v2", "widgets", "Widget", "", true)
	eq := RegistryEquivalents(reg)
	versions := func(gvr api.GroupVersionResource) []string {
		var out []string
		for _, e := range eq(gvr) {
			if e.Kind.Version != e.Resource.Version || e.Kind.Kind != "Widget" || e.Convert == nil {
				t.Errorf("%v: bad equivalent %+v", gvr, e)
			}
			out = append(out, e.Resource.Version)
		}
		return out
	}
	tests := []struct {
		gvr  api.GroupVersionResource
		want []string
	}{
		{api.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, []string{"v2", "v3"}},
		{api.GroupVersionResource{Group: "example.com", Version: "v3", Resource: "widgets"}, []string{"v2", "v1"}},
		{api.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}, []string{"v1", "v3"}},
		{api.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, nil},
		{api.GroupVersionResource{Group: "example.com", Version: "v9", Resource: "widgets"}, nil},
	}
	for _, tt := range tests {
		if got := versions(tt.gvr); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: equivalents %v, want %v", tt.gvr, got, tt.want)
		}
	}
}
