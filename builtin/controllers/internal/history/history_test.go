package history

import (
	"strings"
	"testing"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestComputeHash(t *testing.T) {
	t.Parallel()
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "x"}}}
	h := ComputeHash(tmpl, nil)
	if h != ComputeHash(tmpl, nil) || h == ComputeHash(tmpl, api.Ptr[int32](1)) {
		t.Fatalf("hash not stable or ignores collisions: %s", h)
	}
	for _, r := range h {
		if !strings.ContainsRune(Alphabet, r) {
			t.Fatalf("hash %q has %q outside the alphabet", h, r)
		}
	}
}

func TestJSONEqualAndPrunable(t *testing.T) {
	t.Parallel()
	if !JSONEqual([]byte(`{"a":1,"b":[2]}`), []byte(`{"b":[2], "a":1}`)) || JSONEqual([]byte(`{"a":1}`), []byte(`{"a":2}`)) {
		t.Fatal("JSONEqual")
	}
	revs := []appsv1.ControllerRevision{{Revision: 3}, {Revision: 1}, {Revision: 2}}
	got := Prunable(revs, 1)
	if len(got) != 2 || got[0].Revision != 1 || got[1].Revision != 2 {
		t.Fatalf("Prunable: %+v", got)
	}
	if Prunable(revs, 3) != nil {
		t.Fatal("nothing beyond the limit")
	}
	if *NextCollisionCount(nil) != 1 || *NextCollisionCount(api.Ptr[int32](4)) != 5 {
		t.Fatal("NextCollisionCount")
	}
}
