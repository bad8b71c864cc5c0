package protobuf

import (
	"reflect"
	"testing"
)

func BenchmarkDecodeDeployment(b *testing.B) {
	body := envelope("apps/v1", "Deployment", testEncoder{}.marshal(sampleDeployment()))
	typ := reflect.TypeFor[Deployment]()
	var d Decoder
	b.Run("map", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := d.Decode(body, typ); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("struct", func(b *testing.B) {
		env, err := Unwrap(body)
		if err != nil {
			b.Fatal(err)
		}
		raw := env.Raw
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			var dep Deployment
			if err := d.DecodeInto(raw, &dep); err != nil {
				b.Fatal(err)
			}
		}
	})
}
