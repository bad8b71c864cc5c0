package crd

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
)

// widgets returns n example.com/v1 Widgets w0..w(n-1) with uids u0..u(n-1).
func widgets(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w%d", i), "namespace": "ns", "uid": fmt.Sprintf("u%d", i)},
			"spec":     map[string]any{"size": i}}
	}
	return out
}

// convertedWidgets is what a correct webhook answers for widgets(n) asked in v2.
func convertedWidgets(n int) []map[string]any {
	out := widgets(n)
	for _, o := range out {
		o["apiVersion"] = "example.com/v2"
		o["spec"] = map[string]any{"replicas": o["spec"].(map[string]any)["size"]}
	}
	return out
}

func TestCheckConversionResponseBatch(t *testing.T) {
	t.Parallel()
	review := func(objs []map[string]any) *ConversionReview {
		return &ConversionReview{APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview",
			Response: &ConversionResponse{UID: "x", ConvertedObjects: objs, Result: api.Status{Status: api.StatusSuccess}}}
	}
	edit := func(f func(objs []map[string]any)) *ConversionReview {
		objs := convertedWidgets(5)
		f(objs)
		return review(objs)
	}
	tests := []struct {
		name    string
		review  *ConversionReview
		wantErr string // exact; "" for success
	}{
		{"ok", review(convertedWidgets(5)), ""},
		{"too few", review(convertedWidgets(4)), "expected 5 converted objects, got 4"},
		{"too many", review(convertedWidgets(6)), "expected 5 converted objects, got 6"},
		{"none", review(nil), "expected 5 converted objects, got 0"},
		{"wrong apiVersion", edit(func(objs []map[string]any) { objs[3]["apiVersion"] = "example.com/v1" }),
			`invalid converted object at index 3: invalid apiVersion "example.com/v1", expected "example.com/v2"`},
		{"wrong kind", edit(func(objs []map[string]any) { objs[4]["kind"] = "Gadget" }),
			`invalid converted object at index 4: invalid kind "Gadget", expected "Widget"`},
		{"changed uid", edit(func(objs []map[string]any) { api.SetNestedField(objs[1], "u9", "metadata", "uid") }),
			`invalid converted object at index 1: invalid metadata.uid "u9", expected "u1": it must not change`},
		{"changed name", edit(func(objs []map[string]any) { api.SetNestedField(objs[2], "w9", "metadata", "name") }),
			`invalid converted object at index 2: invalid metadata.name "w9", expected "w2": it must not change`},
		{"changed namespace", edit(func(objs []map[string]any) { api.SetNestedField(objs[0], "other", "metadata", "namespace") }),
			`invalid converted object at index 0: invalid metadata.namespace "other", expected "ns": it must not change`},
		{"out of order", edit(func(objs []map[string]any) { objs[0], objs[1] = objs[1], objs[0] }),
			`invalid converted object at index 0: invalid metadata.name "w1", expected "w0": it must not change`},
		{"uid not echoed", func() *ConversionReview { r := review(convertedWidgets(5)); r.Response.UID = "y"; return r }(),
			`expected response.uid="x", got "y"`},
		{"failure", func() *ConversionReview {
			r := review(nil)
			r.Response.Result = api.Status{Status: api.StatusFailure, Message: "object 2 (w2): cannot"}
			return r
		}(), "object 2 (w2): cannot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := checkResponse(tt.review, "x", widgets(5), "example.com/v2")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range out {
				if n := api.NestedString(o, "metadata", "name"); n != fmt.Sprintf("w%d", i) {
					t.Errorf("item %d: name %q", i, n)
				}
				if o["apiVersion"] != "example.com/v2" {
					t.Errorf("item %d: apiVersion %v", i, o["apiVersion"])
				}
			}
		})
	}
}

func TestConversionChunks(t *testing.T) {
	t.Parallel()
	raw := func(sizes ...int) []json.RawMessage {
		out := make([]json.RawMessage, len(sizes))
		for i, n := range sizes {
			out[i] = make(json.RawMessage, n)
		}
		return out
	}
	tests := []struct {
		name           string
		raw            []json.RawMessage
		maxObj, maxLen int
		want           string
	}{
		{"one chunk", raw(10, 10, 10), 1000, 1 << 20, "[[0 3]]"},
		{"by count", raw(1, 1, 1, 1, 1), 2, 1 << 20, "[[0 2] [2 4] [4 5]]"},
		{"by size", raw(40, 40, 40), 1000, 100, "[[0 2] [2 3]]"},
		{"a large object alone", raw(10, 500, 10), 1000, 100, "[[0 1] [1 2] [2 3]]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(chunks(tt.raw, tt.maxObj, tt.maxLen)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// conversionServer is a conversion webhook renaming spec.size to spec.replicas
// that records the reviews it receives; answer may tamper with its answer.
type conversionServer struct {
	*httptest.Server
	mu      sync.Mutex
	reviews []*ConversionRequest
	answer  func(objs []map[string]any)
}

func newConversionServer(t *testing.T) *conversionServer {
	s := &conversionServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&rv); err != nil || rv.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reviews = append(s.reviews, rv.Request)
		answer := s.answer
		s.mu.Unlock()
		out := make([]map[string]any, 0, len(rv.Request.Objects))
		for _, o := range rv.Request.Objects {
			o = api.DeepCopyJSON(o)
			spec, _ := o["spec"].(map[string]any)
			spec["replicas"] = spec["size"]
			delete(spec, "size")
			o["apiVersion"] = rv.Request.DesiredAPIVersion
			out = append(out, o)
		}
		if answer != nil {
			answer(out)
		}
		_ = json.NewEncoder(w).Encode(ConversionReview{APIVersion: ConversionReviewAPIVersion, Kind: "ConversionReview",
			Response: &ConversionResponse{UID: rv.Request.UID, ConvertedObjects: out, Result: api.Status{Status: api.StatusSuccess}}})
	}))
	t.Cleanup(s.Close)
	return s
}

// received returns the requests received so far.
func (s *conversionServer) received() []*ConversionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*ConversionRequest(nil), s.reviews...)
}

func (s *conversionServer) crd() *crdapi.CustomResourceDefinition {
	c := &crdapi.CustomResourceDefinition{}
	c.Spec.Group, c.Spec.Names.Kind = "example.com", "Widget"
	u := s.URL + "/convert"
	c.Spec.Conversion = &crdapi.CustomResourceConversion{Strategy: "Webhook", Webhook: &crdapi.WebhookConversion{
		ClientConfig: &crdapi.WebhookClientConfig{URL: &u,
			CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})},
		ConversionReviewVersions: []string{"v1"},
	}}
	return c
}

func TestWebhookConvertList(t *testing.T) {
	t.Parallel()
	s := newConversionServer(t)
	_, convertList := converters(s.crd(), nil)
	v2 := api.GroupVersion{Group: "example.com", Version: "v2"}

	in := widgets(5)
	in[2]["apiVersion"] = "example.com/v2" // already in the desired version: not sent
	out, err := convertList(in, v2)
	if err != nil {
		t.Fatal(err)
	}
	reviews := s.received()
	if len(reviews) != 1 {
		t.Fatalf("%d reviews, want 1", len(reviews))
	}
	r := reviews[0]
	if r.DesiredAPIVersion != "example.com/v2" || len(r.Objects) != 4 {
		t.Fatalf("review for %s with %d objects, want example.com/v2 with 4", r.DesiredAPIVersion, len(r.Objects))
	}
	for i, o := range out {
		if n := api.NestedString(o, "metadata", "name"); n != fmt.Sprintf("w%d", i) {
			t.Errorf("item %d: name %q (order lost)", i, n)
		}
		if i != 2 && (o["apiVersion"] != "example.com/v2" || api.NestedMap(o, "spec")["replicas"] == nil) {
			t.Errorf("item %d not converted: %v", i, o)
		}
	}
	if out[2]["spec"].(map[string]any)["size"] != 2 {
		t.Errorf("item 2 was converted again: %v", out[2])
	}

	// Nothing to convert: no review.
	if _, err := convertList(widgets(0), v2); err != nil || len(s.received()) != 1 {
		t.Fatalf("empty list: %v, %d reviews", err, len(s.received()))
	}

	// An invalid answer fails the whole list with the single path's wording.
	s.mu.Lock()
	s.answer = func(objs []map[string]any) { api.SetNestedField(objs[1], "changed", "metadata", "uid") }
	s.mu.Unlock()
	_, err = convertList(widgets(3), v2)
	want := `conversion webhook for example.com/v1, Kind=Widget failed: invalid converted object at index 1: invalid metadata.uid "changed", expected "u1": it must not change`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	s.mu.Lock()
	s.answer = func(objs []map[string]any) { objs[0]["apiVersion"] = "example.com/v3" }
	s.mu.Unlock()
	_, err = convertList(widgets(3), v2)
	if err == nil || !strings.HasPrefix(err.Error(), "conversion webhook for example.com/v1, Kind=Widget failed: invalid converted object at index 0: invalid apiVersion") {
		t.Fatalf("error %v", err)
	}
}

func TestConvertNoneList(t *testing.T) {
	t.Parallel()
	c := &crdapi.CustomResourceDefinition{}
	_, convertList := converters(c, nil)
	out, err := convertList(widgets(3), api.GroupVersion{Group: "example.com", Version: "v2"})
	if err != nil || len(out) != 3 {
		t.Fatalf("%v, %v", out, err)
	}
	for _, o := range out {
		if o["apiVersion"] != "example.com/v2" {
			t.Errorf("apiVersion %v", o["apiVersion"])
		}
	}
}
