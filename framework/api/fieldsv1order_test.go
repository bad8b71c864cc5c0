package api

import (
	"bytes"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// TestFieldsV1Order checks that FieldsV1 sets decoded and encoded again come
// out byte for byte as structured-merge-diff's Set.ToJSON (what Kubernetes
// writes) writes them, and that other maps keep encoding/json's order.
func TestFieldsV1Order(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"ports by number", `{"f:spec":{"f:ports":{".":{},"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:port":{}},"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}},"k:{\"port\":80,\"protocol\":\"UDP\"}":{}}}}`},
		{"container ports", `{"k:{\"containerPort\":10000,\"protocol\":\"TCP\"}":{},"k:{\"containerPort\":9,\"protocol\":\"TCP\"}":{},"k:{\"containerPort\":9,\"protocol\":\"SCTP\"}":{}}`},
		{"set values", `{"f:finalizers":{".":{},"v:\"b\"":{},"v:\"a b\"":{},"v:\"a\"":{},"v:10":{},"v:9":{},"v:1.5":{},"v:true":{},"v:false":{},"v:null":{}}}`},
		{"indexes", `{"f:x":{"i:10":{},"i:2":{},"i:1":{".":{},"f:a":{}}}}`},
		{"keys of different fields", `{"k:{\"b\":1}":{},"k:{\"a\":2}":{},"k:{\"a\":1,\"b\":1}":{},"k:{\"a\":1}":{}}`},
		{"fields only", `{"f:b":{},"f:a":{".":{},"f:y":{}},"f:a b":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := fieldpath.NewSet()
			if err := set.FromJSON(bytes.NewReader([]byte(tc.in))); err != nil {
				t.Fatal(err)
			}
			want, err := set.ToJSON()
			if err != nil {
				t.Fatal(err)
			}
			v, err := DecodeValue([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeJSON(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
	// Maps that are not FieldsV1 levels keep encoding/json's order.
	got, _ := EncodeJSON(map[string]any{"i:10": 1, "i:9": 2, "x": 3})
	if string(got) != `{"i:10":1,"i:9":2,"x":3}` {
		t.Fatalf("a plain map: %s", got)
	}
}
