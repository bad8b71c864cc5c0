package protobuf

import (
	"reflect"
	"testing"
)

// FuzzDecode checks that arbitrary bodies never panic, and that whatever
// decodes also decodes through DecodeInto.
func FuzzDecode(f *testing.F) {
	f.Add(mustHex(f, kubectlCreateNamespaceFoo))
	f.Add(envelope("apps/v1", "Deployment", testEncoder{}.marshal(sampleDeployment())))
	f.Add(envelope("v1", "X", testEncoder{packed: true}.marshal(sampleEverything())))
	f.Add(envelope("v1", "X", nest(8)))
	f.Add(Magic[:])
	var d Decoder
	types := []reflect.Type{reflect.TypeFor[Deployment](), reflect.TypeFor[Everything](), reflect.TypeFor[Recursive]()}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, typ := range types {
			_, obj, err := d.Decode(body, typ)
			if err == nil && obj == nil {
				t.Fatalf("Decode(%s) returned neither an object nor an error", typ)
			}
			if len(body) >= len(Magic) {
				v := reflect.New(typ)
				_ = d.DecodeInto(body[len(Magic):], v.Interface())
			}
		}
	})
}
