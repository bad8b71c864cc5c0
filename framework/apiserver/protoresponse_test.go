package apiserver

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
)

func TestPrefersProtobuf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"application/json", false},
		{"*/*", false},
		{"application/vnd.kubernetes.protobuf", true},
		{"application/vnd.kubernetes.protobuf, */*", true}, // client-go
		{"application/vnd.kubernetes.protobuf,application/json", true},
		{"application/json, application/vnd.kubernetes.protobuf", false},
		{"application/json;q=0.9, application/vnd.kubernetes.protobuf", true},
		{"application/vnd.kubernetes.protobuf;q=0.5, application/json", false},
		{"application/vnd.kubernetes.protobuf;q=0", false},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", false},
		{"application/cbor, application/vnd.kubernetes.protobuf", true},
		{"application/vnd.kubernetes.protobuf;q=abc, application/json", false},
		{";;;, application/vnd.kubernetes.protobuf", true},
	}
	for _, tc := range tests {
		t.Run(tc.accept, func(t *testing.T) {
			t.Parallel()
			if got := prefersProtobuf(tc.accept); got != tc.want {
				t.Errorf("prefersProtobuf(%q) = %v, want %v", tc.accept, got, tc.want)
			}
		})
	}
}

type gadget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           gadgetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

type gadgetSpec struct {
	Size   *int32            `json:"size,omitempty" protobuf:"varint,1,opt,name=size"`
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,2,rep,name=labels"`
	Tags   []string          `json:"tags,omitempty" protobuf:"bytes,3,rep,name=tags"`
}

type gadgetList struct {
	Metadata api.ListMeta `protobuf:"bytes,1,opt,name=metadata"`
	Items    []gadget     `protobuf:"bytes,2,rep,name=items"`
}

// TestProtoWriter checks which JSON responses protoWriter re-encodes as
// protobuf and that what it writes decodes to the same object.
func TestProtoWriter(t *testing.T) {
	t.Parallel()
	const obj = `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g1","namespace":"ns","resourceVersion":"7","uid":"u-1","labels":{"a":"b"},"creationTimestamp":"2026-12-04T19:00:00Z"},"spec":{"size":0,"labels":{"x":"y"},"tags":["t1","t2"]}}`
	const list = `{"apiVersion":"example.com/v1","kind":"GadgetList","metadata":{"resourceVersion":"9","continue":"c"},"items":[` + obj + `,{"metadata":{"name":"g2"},"spec":{}}]}`
	tests := []struct {
		name, ctype, body string
		code              int
		proto             bool
	}{
		{name: "object", ctype: mediaJSON, body: obj, code: http.StatusOK, proto: true},
		{name: "created object", ctype: mediaJSON, body: obj, code: http.StatusCreated, proto: true},
		{name: "list", ctype: mediaJSON, body: list, code: http.StatusOK, proto: true},
		{name: "field the type lacks", ctype: mediaJSON, body: strings.Replace(obj, `"tags"`, `"color":"red","tags"`, 1), code: http.StatusOK},
		{name: "item with a field the type lacks", ctype: mediaJSON, body: strings.Replace(list, `"spec":{}`, `"spec":{"color":1}`, 1), code: http.StatusOK},
		{name: "Status", ctype: mediaJSON, body: `{"kind":"Status","apiVersion":"v1","status":"Success","code":200}`, code: http.StatusOK},
		{name: "error", ctype: mediaJSON, body: `{"kind":"Status","apiVersion":"v1","status":"Failure","code":404}`, code: http.StatusNotFound},
		{name: "not JSON", ctype: "text/plain", body: "hello", code: http.StatusOK},
		{name: "malformed JSON", ctype: mediaJSON, body: `{"kind":"Gadget",`, code: http.StatusOK},
		{name: "wrong JSON type", ctype: mediaJSON, body: `{"kind":"Gadget","spec":{"size":"big"}}`, code: http.StatusOK},
	}
	s := &Server{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			w := &protoWriter{ResponseWriter: rec, s: s, typ: reflect.TypeFor[gadget](), kind: "Gadget", listKind: "GadgetList"}
			w.Header().Set("Content-Type", tc.ctype)
			w.WriteHeader(tc.code)
			_, _ = w.Write([]byte(tc.body))
			w.finish()
			if rec.Code != tc.code {
				t.Errorf("code %d, want %d", rec.Code, tc.code)
			}
			if got := rec.Header().Get("Content-Length"); got != "" && got != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("Content-Length %s for a body of %d bytes", got, rec.Body.Len())
			}
			if !tc.proto {
				if ct := rec.Header().Get("Content-Type"); ct != tc.ctype || rec.Body.String() != tc.body {
					t.Errorf("got %s %q, want the response unchanged", ct, rec.Body.String())
				}
				return
			}
			if ct := rec.Header().Get("Content-Type"); ct != mediaProtobuf {
				t.Fatalf("Content-Type %q, want protobuf", ct)
			}
			want, err := api.DecodeMap([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			typ := reflect.TypeFor[gadget]()
			if want["kind"] == "GadgetList" {
				typ = reflect.TypeFor[gadgetList]()
				// Items carry no apiVersion and kind in protobuf, as in Kubernetes.
				items := want["items"].([]any)
				delete(items[0].(map[string]any), "apiVersion")
				delete(items[0].(map[string]any), "kind")
				items[1].(map[string]any)["metadata"].(map[string]any)["creationTimestamp"] = nil
			}
			_, got, err := s.proto.Decode(rec.Body.Bytes(), typ)
			if err != nil {
				t.Fatalf("decode the response: %v", err)
			}
			if typ == reflect.TypeFor[gadgetList]() {
				got["metadata"], got["items"] = got["Metadata"], got["Items"]
				delete(got, "Metadata")
				delete(got, "Items")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the protobuf response decodes to another object (-json +protobuf):\n%s", diff)
			}
		})
	}
}
