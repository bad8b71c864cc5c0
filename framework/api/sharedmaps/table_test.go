package sharedmaps

import (
	"maps"
	"reflect"
	"testing"
)

func same(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestShare(t *testing.T) {
	tab := NewTable(3)
	a := tab.Share(map[string]string{"app": "x", "tier": "web"}, nil)
	b := tab.Share(map[string]string{"tier": "web", "app": "x"}, nil)
	if !same(a, b) {
		t.Error("equal maps not shared")
	}
	prepared := 0
	c := tab.Share(map[string]string{"app": "y"}, func(m map[string]string) map[string]string {
		prepared++
		return maps.Clone(m)
	})
	if same(a, c) || c["app"] != "y" || prepared != 1 {
		t.Errorf("different map: %v, shared %v, prepared %d", c, same(a, c), prepared)
	}
	if d := tab.Share(map[string]string{"app": "y"}, func(map[string]string) map[string]string { prepared++; return nil }); !same(c, d) || prepared != 1 {
		t.Errorf("second equal map: shared %v, prepared %d times", same(c, d), prepared)
	}
	if tab.Share(nil, nil) != nil {
		t.Error("nil not nil")
	}
	if e := tab.Share(map[string]string{}, nil); e == nil || len(e) != 0 {
		t.Errorf("empty map became %v", e)
	}
	// Full (3): the table starts over; maps handed out keep their content.
	tab.Share(map[string]string{"k": "1"}, nil)
	tab.Share(map[string]string{"k": "2"}, nil)
	if n := len(tab.sets); n > 3 {
		t.Errorf("table holds %d maps, size 3", n)
	}
	if a["app"] != "x" || c["app"] != "y" {
		t.Errorf("handed-out maps changed: %v %v", a, c)
	}
}
