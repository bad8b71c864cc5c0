package apiserver

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		if _, ok := obj["metadata"]; !ok || obj[firstKey] != nil {
			t.Errorf("encodeStored left obj changed: %v", obj)
		}
	}
}
