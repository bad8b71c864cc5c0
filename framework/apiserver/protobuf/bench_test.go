package protobuf

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/converge-dev/converge/framework/api"
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

// BenchmarkEncodeDeployment measures a protobuf response's cost over the JSON
// one: the JSON the server holds is decoded into the Go type and marshalled.
func BenchmarkEncodeDeployment(b *testing.B) {
	js, err := json.Marshal(sampleDeployment())
	if err != nil {
		b.Fatal(err)
	}
	var d Decoder
	b.Run("json-to-protobuf", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		b.ReportAllocs()
		for b.Loop() {
			var dep Deployment
			if err := json.Unmarshal(js, &dep); err != nil {
				b.Fatal(err)
			}
			if _, err := d.EncodeObject(api.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, &dep); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal", func(b *testing.B) {
		dep := sampleDeployment()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Marshal(dep); err != nil {
				b.Fatal(err)
			}
		}
	})
}
