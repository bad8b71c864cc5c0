package fieldmanager

import (
	"fmt"
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
