package fieldmanager

import (
	"fmt"
	"maps"
	"testing"

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
			b.ReportAllocs()
			for b.Loop() {
				o, _, _ := WithoutManagedFields(obj)
				o["metadata"] = maps.Clone(o["metadata"].(map[string]any))
				if err := m.Update(nil, o, "creator"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
