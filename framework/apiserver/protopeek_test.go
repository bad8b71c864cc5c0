package apiserver

import (
	"encoding/json"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestPeekTypeMeta(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want api.TypeMeta
		ok   bool
	}{
		{`{"apiVersion":"v1","data":{"k":"x\"}{,"},"kind":"ConfigMap","metadata":{"name":"a"}}`, api.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, true},
		{` { "items" : [ {"kind":"Pod"}, [1, 2.5e3, true, null] ] , "kind" : "PodList" } `, api.TypeMeta{Kind: "PodList"}, true},
		{`{"n":12,"b":false,"apiVersion":"apps/v1"}`, api.TypeMeta{APIVersion: "apps/v1"}, true},
		{`{}`, api.TypeMeta{}, true},
		{`{"kind":"Cat\u0061"}`, api.TypeMeta{}, false}, // escapes: not plain
		{`{"ki\nd":"x"}`, api.TypeMeta{}, false},
		{`{"KIND":"x"}`, api.TypeMeta{}, false},
		{"{\"kind\":\"\xc3\xa9\"}", api.TypeMeta{}, false},
		{`{"kind":1}`, api.TypeMeta{}, false},
		{`{"kind":"Gadget",`, api.TypeMeta{}, false},
		{`{"spec":{"a":[1,2}`, api.TypeMeta{}, false},
		{`[]`, api.TypeMeta{}, false},
		{``, api.TypeMeta{}, false},
	}
	for _, tc := range tests {
		got, ok := peekTypeMeta([]byte(tc.body))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("peekTypeMeta(%s) = %+v, %v; want %+v, %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzPeekTypeMeta: on any input peekTypeMeta does not panic, and where it
// answers for valid JSON it reads what encoding/json reads.
func FuzzPeekTypeMeta(f *testing.F) {
	for _, s := range []string{`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`, `{"items":[{"kind":"x"}],"kind":"L"}`, `{"a":[1,{"b":"\""}],"kind":"K"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := peekTypeMeta(body)
		if !ok || !json.Valid(body) {
			return
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if json.Unmarshal(body, &head) != nil {
			return // e.g. kind not a string somewhere deeper: strict decoding refuses it later
		}
		if got.APIVersion != head.APIVersion || got.Kind != head.Kind {
			t.Fatalf("peekTypeMeta(%s) = %+v; encoding/json reads %+v", body, got, head)
		}
	})
}
