package cache_test

import (
	"reflect"
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

// Objects with equal labels share one labels map, whether they came from the
// list or the watch; other labels keep their own.
func TestCachedObjectsShareEqualLabels(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if err := c.Create(ctx, configMap("default", "listed", map[string]string{"app": "web", "tier": "1"})); err != nil {
		t.Fatal(err)
	}
	inf, err := cache.NewClientInformer[CM](c, cache.InformerOptions[CM]{})
	if err != nil {
		t.Fatal(err)
	}
	start(t, inf)
	for name, labels := range map[string]map[string]string{"a": {"tier": "1", "app": "web"}, "b": {"app": "web", "tier": "1"}, "other": {"app": "db"}} {
		if err := c.Create(ctx, configMap("default", name, labels)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]CM{}
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 4 {
		for _, name := range []string{"listed", "a", "b", "other"} {
			if o, ok := inf.Store().Get("default/" + name); ok {
				got[name] = o
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cached %d of 4 objects", len(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(got["listed"].Labels, got["a"].Labels) || !same(got["a"].Labels, got["b"].Labels) {
		t.Error("equal labels are not one map")
	}
	if same(got["a"].Labels, got["other"].Labels) || got["other"].Labels["app"] != "db" || got["b"].Labels["tier"] != "1" {
		t.Errorf("labels: other %v, b %v", got["other"].Labels, got["b"].Labels)
	}
}
