package fieldmanager

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
)

// BenchmarkUpdate measures the bookkeeping of one Update of a Deployment-like
// object by a manager that already owns fields (the common controller case).
func BenchmarkUpdate(b *testing.B) {
	t := &testing.T{}
	m := newManager(t, Options{Ignore: []string{"status"}})
	live := canon(t, dep)
	if err := m.Update(nil, live, "creator"); err != nil {
		b.Fatal(err)
	}
	api.SetNestedField(live, "uid", "metadata", "uid")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next := api.DeepCopyJSON(live)
		api.SetNestedField(next, fmt.Sprint(i), "metadata", "labels", "n")
		if err := m.Update(live, next, "ctrl"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate measures the bookkeeping of a create (a Deployment-like
// object): the walk of the object, and the library's comparison it replaces.
func BenchmarkCreate(b *testing.B) {
	for _, lib := range []bool{false, true} {
		b.Run(map[bool]string{false: "walk", true: "library"}[lib], func(b *testing.B) {
			t := &testing.T{}
			m := newManager(t, Options{Ignore: []string{"status"}, LibraryCreates: lib})
			obj := canon(t, dep)
			benchCreates(b, m, obj)
		})
	}
}

// BenchmarkCreateConfigMap is BenchmarkCreate for a small ConfigMap-like
// object, as the API server's create benchmarks send.
func BenchmarkCreateConfigMap(b *testing.B) {
	type configMap struct {
		api.TypeMeta   `json:",inline"`
		api.ObjectMeta `json:"metadata,omitempty"`
		Data           map[string]string `json:"data,omitempty"`
	}
	typ, err := TypeOf(reflect.TypeFor[configMap]())
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(Options{Type: typ, APIVersion: "v1"})
	if err != nil {
		b.Fatal(err)
	}
	obj, err := api.DecodeMap([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-1","namespace":"default",` +
		`"uid":"6c1f1a1e-0000-4000-8000-000000000000","creationTimestamp":"2026-12-05T06:00:00Z","labels":{"app":"x"}},"data":{"k":"v","n":"1"}}`))
	if err != nil {
		b.Fatal(err)
	}
	benchCreates(b, m, obj)
}

// benchCreates runs creates of obj (a copy whose metadata takes the
// managedFields) through m: Update, which leaves the entry decoded, and
// UpdateEncoded, which leaves it as the bytes stored (the API server's
// creates), followed by the encoding of the entry either way.
func benchCreates(b *testing.B, m *Manager, obj map[string]any) {
	for _, encoded := range []bool{false, true} {
		b.Run(map[bool]string{false: "decoded", true: "encoded"}[encoded], func(b *testing.B) {
			update := m.Update
			if encoded {
				update = func(live, obj map[string]any, manager string) error {
					_, err := m.UpdateEncoded(live, obj, manager, time.Time{}, false)
					return err
				}
			}
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				o, _, _ := WithoutManagedFields(obj)
				o["metadata"] = maps.Clone(o["metadata"].(map[string]any))
				if err := update(nil, o, "creator"); err != nil {
					b.Fatal(err)
				}
				var err error
				if buf, err = api.AppendJSON(buf[:0], o["metadata"].(map[string]any)["managedFields"]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
