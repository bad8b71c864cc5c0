package apiserver

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
)

func TestEncodeStoredSplicesResourceVersion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		obj  string
		rv   int64
		want string
	}{
		{"metadata and fields", `{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"},"data":{"k":"v"}}`, 42,
			`{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"42"},"data":{"k":"v"}}`},
		{"metadata only", `{"metadata":{"name":"a"}}`, 3, `{"metadata":{"name":"a","resourceVersion":"3"}}`},
		{"only resourceVersion in metadata", `{"metadata":{"resourceVersion":"1"},"x":1}`, 9,
			`{"metadata":{"resourceVersion":"9"},"x":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var obj map[string]any
			if err := json.Unmarshal([]byte(c.obj), &obj); err != nil {
				t.Fatal(err)
			}
			before := cmp.Diff(nil, obj)
			stored, err := encodeStored(obj)
			if err != nil {
				t.Fatalf("encodeStored: %v", err)
			}
			if cmp.Diff(nil, obj) != before {
				t.Errorf("encodeStored changed its input")
			}
			var storedMap map[string]any
			if err := json.Unmarshal(stored, &storedMap); err != nil {
				t.Fatalf("stored bytes are not JSON: %v\n%s", err, stored)
			}
			if _, ok := storedMap["metadata"].(map[string]any)["resourceVersion"]; ok {
				t.Errorf("stored bytes keep resourceVersion: %s", stored)
			}
			spliced := withResourceVersion(stored, c.rv)
			assertSameJSON(t, spliced, c.want)
			if body := storedBody(stored, c.rv); string(body.head)+string(body.tail) != string(spliced) {
				t.Errorf("storedBody = %s + %s, want %s", body.head, body.tail, spliced)
			}
			decoded, err := decodeStored(stored, c.rv)
			if err != nil {
				t.Fatalf("decodeStored: %v", err)
			}
			b, _ := json.Marshal(decoded)
			assertSameJSON(t, b, c.want)
		})
	}
}

func TestWithResourceVersionForeignBytes(t *testing.T) {
	t.Parallel()
	// Bytes not written by encodeStored (metadata not first) are re-encoded.
	got := withResourceVersion([]byte(`{"kind":"X","metadata":{"name":"a"}}`), 5)
	assertSameJSON(t, got, `{"kind":"X","metadata":{"name":"a","resourceVersion":"5"}}`)
	got = withResourceVersion([]byte(`{"kind":"X"}`), 6)
	assertSameJSON(t, got, `{"kind":"X","metadata":{"resourceVersion":"6"}}`)
	if body := storedBody([]byte(`{"kind":"X"}`), 6); string(body.head)+string(body.tail) != string(got) {
		t.Errorf("storedBody = %s + %s, want %s", body.head, body.tail, got)
	}
}

func TestEncodeStoredRejectsEmptyMetadata(t *testing.T) {
	t.Parallel()
	if _, err := encodeStored(map[string]any{"kind": "X"}); err == nil {
		t.Fatal("encodeStored accepted an object without metadata")
	}
}

func assertSameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s\ngot: %s", d, got)
	}
}

func TestEncodeStoredMatchesTwoPassEncoding(t *testing.T) {
	t.Parallel()
	for _, obj := range []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "<&>"}},
			"data": map[string]any{"b": "2", "a": "1"}, "Zeta": 1.5, "_x": []any{int64(1), "s", nil}},
		{"metadata": map[string]any{"name": "only"}},
		{"": "empty key", "metadata": map[string]any{"name": "a"}},
		{"metadata": map[string]any{"name": "a", "resourceVersion": "3"}, "spec": map[string]any{"\x00": true}},
	} {
		want, err := encodeStoredSlow(obj, obj["metadata"].(map[string]any))
		if err != nil {
			t.Fatal(err)
		}
		hadRV := obj["metadata"].(map[string]any)["resourceVersion"]
		if hadRV != nil {
			delete(obj["metadata"].(map[string]any), "resourceVersion")
			want, _ = encodeStoredSlow(obj, obj["metadata"].(map[string]any))
			obj["metadata"].(map[string]any)["resourceVersion"] = hadRV
		}
		got, err := encodeStored(obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("encodeStored = %s\nwant          %s", got, want)
		}
		if _, ok := obj["metadata"]; !ok || obj["\x00metadata"] != nil {
			t.Errorf("encodeStored left obj changed: %v", obj)
		}
	}
}

// TestEncodeStoredBytes pins the stored encoding byte for byte to what
// json.Marshal gives (metadata first, then the other keys sorted): a write whose
// bytes would not change must commit nothing, so the encoding may never drift.
func TestEncodeStoredBytes(t *testing.T) {
	t.Parallel()
	reference := func(obj map[string]any) string {
		meta := map[string]any{}
		for k, v := range obj["metadata"].(map[string]any) {
			if k != "resourceVersion" {
				meta[k] = v
			}
		}
		rest := map[string]any{}
		for k, v := range obj {
			if k != "metadata" {
				rest[k] = v
			}
		}
		mb, _ := json.Marshal(meta)
		rb, _ := json.Marshal(rest)
		if len(rb) == 2 {
			return `{"metadata":` + string(mb) + `}`
		}
		return `{"metadata":` + string(mb) + `,` + string(rb[1:])
	}
	for _, in := range []string{
		`{"metadata":{"name":"a","resourceVersion":"7","labels":{"z":"1","a":"<&>"}},"kind":"ConfigMap","apiVersion":"v1","data":{"k":"v\n\u2028é"}}`,
		`{"metadata":{"name":"a"}}`,
		`{"metadata":{"name":"a"},"":1,"\u0000":2,"A":[1,2.5,-0.000001,1e21,null,true,{"b":{}}]}`,
		`{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}},"metadata":{"generation":1,"annotations":{"x":"{\"a\":1}"}}}`,
	} {
		obj, err := api.DecodeMap([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeStored(obj)
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(obj); string(got) != want {
			t.Errorf("encodeStored(%s):\n got %s\nwant %s", in, got, want)
		}
	}
}

// encodeStoredSlow is the two-pass encoding encodeStored must equal: metadata
// and the rest marshalled separately by encoding/json.
func encodeStoredSlow(obj, meta map[string]any) ([]byte, error) {
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			rest[k] = v
		}
	}
	rb, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	out := append([]byte(`{"metadata":`), mb...)
	if len(rb) > 2 {
		return append(append(out, ','), rb[1:]...), nil
	}
	return append(out, '}'), nil
}
