package patch

import "testing"

// A JSON patch as kubectl patch --type=json and admission webhooks send them:
// a test as precondition, label and annotation edits, an element appended to a
// nested list and a replace deep in the pod template.
var benchJSONPatch = []byte(`[
 {"op":"test","path":"/metadata/name","value":"d1"},
 {"op":"add","path":"/metadata/labels/tier","value":"frontend"},
 {"op":"add","path":"/metadata/annotations","value":{"example.com/owner":"team-a"}},
 {"op":"replace","path":"/spec/replicas","value":5},
 {"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"C","value":"3"}},
 {"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"}]`)

// A merge patch as kubectl patch --type=merge and controllers send them.
var benchMergePatch = []byte(`{"metadata":{"labels":{"tier":"frontend","app":null},"annotations":{"example.com/owner":"team-a"}},
 "spec":{"replicas":5,"template":{"spec":{"nodeSelector":{"disk":"ssd"}}}}}`)

func BenchmarkJSONPatch(b *testing.B) {
	doc := []byte(liveDeployment)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := JSONPatch(doc, benchJSONPatch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMergePatch(b *testing.B) {
	doc := []byte(liveDeployment)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := MergePatch(doc, benchMergePatch); err != nil {
			b.Fatal(err)
		}
	}
}
