package fieldmanager

import (
	"math/rand/v2"
	"testing"

	"github.com/converge-dev/converge/builtin/api/all"
)

// TestCreateFieldsBuiltins: the walk of creates and the library's comparison
// store the same managedFields for random objects of every built-in type
// (their merge schemas from struct tags; status ignored where a status
// subresource owns it, as the API server's create does).
func TestCreateFieldsBuiltins(t *testing.T) {
	g := &objGen{r: rand.New(rand.NewPCG(7, 7)), noise: 3}
	walked, n := 0, 0
	for _, res := range all.Resources() {
		if res.Type == nil {
			continue
		}
		typ, err := TypeOf(res.Type)
		if err != nil {
			t.Fatalf("%s: %v", res.GroupVersionResource(), err)
		}
		var ignore []string
		if res.StatusSubresource {
			ignore = []string{"status"}
		}
		for range 100 {
			n++
			if sameCreates(t, typ, res.GroupVersion.String(), ignore, createObject(typ, g)) {
				walked++
			}
		}
	}
	t.Logf("%d of %d creates walked", walked, n)
	if walked < n/2 {
		t.Errorf("only %d of %d creates walked", walked, n)
	}
}
