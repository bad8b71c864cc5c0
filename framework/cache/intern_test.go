package cache_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/converge-dev/converge/framework/cache"
)

// Objects cached from the watch (not only from the list) share one copy of
// each short string, such as a label value thousands of objects carry.
func TestWatchedObjectsShareStrings(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	inf, err := cache.NewClientInformer[CM](c, cache.InformerOptions[CM]{})
	if err != nil {
		t.Fatal(err)
	}
	start(t, inf)
	for _, name := range []string{"a", "b"} {
		if err := c.Create(ctx, configMap("default", name, map[string]string{"app": "web"})); err != nil {
			t.Fatal(err)
		}
	}
	var a, b CM
	deadline := time.Now().Add(10 * time.Second)
	for {
		var okA, okB bool
		a, okA = inf.Store().Get("default/a")
		b, okB = inf.Store().Get("default/b")
		if okA && okB {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch did not deliver both objects")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if unsafe.StringData(a.Labels["app"]) != unsafe.StringData(b.Labels["app"]) {
		t.Error("two watched objects hold separate copies of one label value")
	}
}
