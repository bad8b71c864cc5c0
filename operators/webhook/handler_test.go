package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

func TestServeAdmission(t *testing.T) {
	t.Parallel()
	h := ServeAdmission(AdmissionFunc(func(_ context.Context, req *AdmissionRequest) *AdmissionResponse {
		switch req.Name {
		case "bad":
			return Denied(errors.New("no"))
		case "invalid":
			return Denied(apierrors.NewBadRequest("bad spec"))
		case "nil":
			return nil
		}
		return Allowed("careful")
	}))
	tests := []struct {
		name, method, body string
		code               int
		want               string
	}{
		{"allowed", http.MethodPost, `{"request":{"uid":"u1","name":"ok"}}`, 200,
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u1","allowed":true,"warnings":["careful"]}}`},
		{"denied", http.MethodPost, `{"request":{"uid":"u2","name":"bad"}}`, 200, `"allowed":false,"status":{"metadata":{},"status":"Failure","message":"no","reason":"Forbidden","code":403}`},
		{"status error kept", http.MethodPost, `{"request":{"uid":"u3","name":"invalid"}}`, 200, `"message":"bad spec","reason":"BadRequest","code":400`},
		{"nil response", http.MethodPost, `{"request":{"uid":"u4","name":"nil"}}`, 200, `"uid":"u4","allowed":false`},
		{"no request", http.MethodPost, `{}`, 400, "no request"},
		{"bad json", http.MethodPost, `{`, 400, "decode review"},
		{"get", http.MethodGet, ``, 405, "only POST"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, "/v", strings.NewReader(tt.body)))
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %s; want %d with %s", tt.name, rec.Code, rec.Body.String(), tt.code, tt.want)
		}
	}
}

func TestConversionHandler(t *testing.T) {
	t.Parallel()
	h := ConversionHandler(&Converter{Pairs: map[VersionPair]ConvertFunc{
		{From: "v1", To: "v2"}: func(obj map[string]any) error {
			if obj["fail"] == true {
				return errors.New("cannot")
			}
			obj["converted"] = true
			return nil
		},
	}})
	serve := func(body string) ConversionReview {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/convert", strings.NewReader(body)))
		var r ConversionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Response == nil {
			t.Fatalf("%d %s: %v", rec.Code, rec.Body.String(), err)
		}
		return r
	}
	r := serve(`{"request":{"uid":"x","desiredAPIVersion":"example.com/v2","objects":[{"apiVersion":"example.com/v1","kind":"W"},{"apiVersion":"example.com/v2","kind":"W"}]}}`)
	if r.Response.UID != "x" || r.Response.Result.Status != "Success" || len(r.Response.ConvertedObjects) != 2 ||
		r.Response.ConvertedObjects[0]["converted"] != true || r.Response.ConvertedObjects[1]["apiVersion"] != "example.com/v2" {
		t.Errorf("success: %+v", r.Response)
	}
	r = serve(`{"request":{"uid":"y","desiredAPIVersion":"example.com/v2","objects":[{"apiVersion":"example.com/v1","kind":"W","fail":true,"metadata":{"name":"w1"}}]}}`)
	if r.Response.Result.Status != "Failure" || r.Response.Result.Message != "object 0 (w1): convert v1 to v2: cannot" || len(r.Response.ConvertedObjects) != 0 {
		t.Errorf("failure: %+v", r.Response)
	}
}

func TestConverted(t *testing.T) {
	t.Parallel()
	rename := func(from, to string) ConvertFunc {
		return func(obj map[string]any) error {
			spec := obj["spec"].(map[string]any)
			if v, ok := spec[from]; ok {
				spec[to] = v
				delete(spec, from)
			}
			return nil
		}
	}
	c := &Converter{Hub: "v2", ToHub: map[string]ConvertFunc{"v1": rename("size", "replicas")},
		FromHub: map[string]ConvertFunc{"v1": rename("replicas", "size")}}
	var seen string
	h := Converted("example.com/v2", c, AdmissionFunc(func(_ context.Context, req *AdmissionRequest) *AdmissionResponse {
		seen = req.Kind.Version + " " + string(req.Object)
		return PatchResponse(req.Object, []byte(`{"apiVersion":"example.com/v2","kind":"W","spec":{"replicas":3,"color":"blue"}}`))
	}))
	resp := h.Handle(context.Background(), &AdmissionRequest{
		Kind: GroupVersionKind{Group: "example.com", Version: "v1", Kind: "W"}, Operation: Create,
		Object: json.RawMessage(`{"apiVersion":"example.com/v1","kind":"W","spec":{"size":3}}`),
	})
	if seen != `v2 {"apiVersion":"example.com/v2","kind":"W","spec":{"replicas":3}}` {
		t.Errorf("the handler saw %s", seen)
	}
	if !resp.Allowed || string(resp.Patch) != `[{"op":"add","path":"/spec/color","value":"blue"}]` {
		t.Errorf("response %+v (patch %s), want the patch in v1", resp, resp.Patch)
	}
	// A request in the handler's version passes through unchanged.
	resp = h.Handle(context.Background(), &AdmissionRequest{
		Kind: GroupVersionKind{Group: "example.com", Version: "v2", Kind: "W"}, Operation: Create,
		Object: json.RawMessage(`{"apiVersion":"example.com/v2","kind":"W","spec":{"replicas":3}}`),
	})
	if seen != `v2 {"apiVersion":"example.com/v2","kind":"W","spec":{"replicas":3}}` || string(resp.Patch) != `[{"op":"add","path":"/spec/color","value":"blue"}]` {
		t.Errorf("same version: saw %s, patch %s", seen, resp.Patch)
	}
}
