package patch

import (
	"encoding/json"
	"testing"
)

func FuzzJSONPatch(f *testing.F) {
	f.Add(`{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`)
	f.Add(`{"a":{"b":[1]}}`, `[{"op":"copy","from":"/a","path":"/c"},{"op":"move","from":"/c/b","path":"/d"},{"op":"test","path":"/d","value":[1]}]`)
	f.Add(`{"/":9,"~1":10}`, `[{"op":"remove","path":"/~01"},{"op":"replace","path":"","value":1}]`)
	f.Add(`[1,2]`, `[{"op":"add","path":"/-","value":3},{"op":"remove","path":"/0"}]`)
	f.Add(`{"a":12345678901234567890}`, `[{"op":"test","path":"/a","value":12345678901234567890}]`)
	for _, c := range codecCases {
		if len(c) < 100 { // the deep nesting cases stay in the table test
			f.Add(c, `[]`)
		}
	}
	f.Fuzz(func(t *testing.T, doc, patch string) {
		checkCodec(t, []byte(doc))
		checkCodec(t, []byte(patch))
		out, err := JSONPatch([]byte(doc), []byte(patch))
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON result %q", out)
		}
	})
}

func FuzzMergePatch(f *testing.F) {
	f.Add(`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`)
	f.Add(`["a"]`, `{"a":"b"}`)
	f.Add(`{"a":"b"}`, `[1]`)
	f.Add(`{"a":1.50,"b":12345678901234567890}`, `{"c":{"d":null}}`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		checkCodec(t, []byte(doc))
		out, err := MergePatch([]byte(doc), []byte(patch))
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON result %q", out)
		}
		// CreateMergePatch must reproduce the result from the document, as
		// long as the result holds no null (merge patch cannot express one).
		res, _ := decode(out)
		if hasNull(res) {
			return
		}
		p, err := CreateMergePatch([]byte(doc), out)
		if err != nil {
			t.Fatalf("CreateMergePatch: %v", err)
		}
		again, err := MergePatch([]byte(doc), p)
		if err != nil {
			t.Fatalf("apply created patch %s: %v", p, err)
		}
		if a, _ := decode(again); !equal(a, res) {
			t.Fatalf("created patch %s gives %s, want %s", p, again, out)
		}
	})
}

func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

func FuzzStrategicMergePatch(f *testing.F) {
	f.Add(liveDeployment, `{"spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"$setElementOrder/env":[{"name":"B"}],"env":[{"name":"B","value":"2"},{"$patch":"delete","name":"A"}],"image":"nginx:1.26","name":"c"}]}}}}`, false)
	f.Add(liveDeployment, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.example.com/f"],"finalizers":["x"],"ownerReferences":[{"$patch":"replace"}]}}`, false)
	f.Add(liveDeployment, `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},"template":{"spec":{"volumes":[{"$retainKeys":["name","hostPath"],"name":"cache","hostPath":{"path":"/"}}]}}}}`, false)
	f.Add(`{"a":{"b":1}}`, `{"a":{"$patch":"replace","c":[{"$patch":"delete"}]}}`, true)
	f.Fuzz(func(t *testing.T, doc, patch string, untyped bool) {
		typ := deploymentType
		if untyped {
			typ = nil
		}
		out, err := StrategicMergePatch([]byte(doc), []byte(patch), typ)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON result %q", out)
		}
	})
}
