package protobuf

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestEncodable(t *testing.T) {
	t.Parallel()
	type untagged struct {
		api.TypeMeta `json:",inline"`
		Name         string `json:"name" protobuf:"bytes,1,opt,name=name"`
		Extra        string `json:"extra"`
	}
	type hidden struct {
		Name    string `json:"name" protobuf:"bytes,1,opt,name=name"`
		Skipped string `json:"-"`
		private string
	}
	type nested struct {
		Inner *untagged `json:"inner" protobuf:"bytes,1,opt,name=inner"`
	}
	var d Decoder
	for _, tc := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[Deployment](), true},
		{reflect.TypeFor[ConfigMap](), true},
		{reflect.TypeFor[Recursive](), true},
		{reflect.TypeFor[api.DeleteOptions](), true},
		{reflect.TypeFor[hidden](), true},
		{reflect.TypeFor[Everything](), false}, // NoTag and Ignored are JSON only
		{reflect.TypeFor[untagged](), false},
		{reflect.TypeFor[nested](), false},
	} {
		if got := d.Encodable(tc.typ); got != tc.want {
			t.Errorf("Encodable(%s) = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

// FuzzMarshal checks that whatever decodes re-encodes to a message that
// decodes to the same value, and that encoding is deterministic.
func FuzzMarshal(f *testing.F) {
	f.Add(testEncoder{}.marshal(sampleDeployment()))
	f.Add(testEncoder{packed: true}.marshal(sampleEverything()))
	f.Add(nest(8))
	var d Decoder
	types := []reflect.Type{reflect.TypeFor[Deployment](), reflect.TypeFor[Everything](), reflect.TypeFor[Recursive]()}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, typ := range types {
			v := reflect.New(typ)
			if d.DecodeInto(raw, v.Interface()) != nil {
				continue
			}
			out, err := d.Marshal(v.Interface())
			if err != nil {
				t.Fatalf("Marshal(%s): %v", typ, err)
			}
			again := reflect.New(typ)
			if err := d.DecodeInto(out, again.Interface()); err != nil {
				t.Fatalf("decode the re-encoded %s: %v", typ, err)
			}
			out2, err := d.Marshal(again.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, out2) {
				t.Fatalf("%s: re-encoding is not stable:\n%x\n%x", typ, out, out2)
			}
		}
	})
}
