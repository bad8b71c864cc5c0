package cache

import (
	"reflect"
	"testing"
	"time"
)

type shToleration struct {
	Key     string
	Seconds *int64
}

type shSource struct {
	Path  string
	Items []string
	Mode  *int32
}

type shSpec struct {
	Tolerations []shToleration
	Sources     []*shSource
	Links       *bool
	Security    *struct{ User *int64 }
	Deleted     *time.Time
	Raw         []byte
	Any         []any
	Names       []string
}

type shObj struct {
	Name string
	Spec shSpec
}

func ptr[T any](v T) *T { return &v }

func newShObj(name string, seconds int64, path string) *shObj {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &shObj{Name: name, Spec: shSpec{
		Tolerations: []shToleration{{Key: "not-ready", Seconds: ptr(seconds)}, {Key: "unreachable", Seconds: ptr(seconds)}},
		Sources:     []*shSource{{Path: path, Items: []string{"ca.crt"}, Mode: ptr[int32](0o644)}},
		Links:       ptr(true),
		Security:    &struct{ User *int64 }{},
		Deleted:     &at,
		Raw:         []byte("raw"),
		Any:         []any{"x"},
		Names:       []string{"a", "b"},
	}}
}

// Equal pointed-to values and short slices of cached objects are one value;
// different ones are not, and the objects read as they were decoded.
func TestInternerSharesEqualValues(t *testing.T) {
	in := newInterner()
	a, b, c := newShObj("a", 300, "token"), newShObj("b", 300, "token"), newShObj("c", 60, "other")
	for _, o := range []*shObj{a, b, c} {
		in.object(o)
	}
	same := func(x, y any) bool { return reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer() }
	for _, tc := range []struct {
		name       string
		x, y       any
		wantShared bool
	}{
		{"tolerations", a.Spec.Tolerations, b.Spec.Tolerations, true},
		{"a toleration's seconds", a.Spec.Tolerations[0].Seconds, b.Spec.Tolerations[1].Seconds, true},
		{"sources (pointers to equal structs holding slices)", a.Spec.Sources, b.Spec.Sources, true},
		{"a bool pointer", a.Spec.Links, c.Spec.Links, true},
		{"an empty struct pointer", a.Spec.Security, c.Spec.Security, true},
		{"a time pointer", a.Spec.Deleted, c.Spec.Deleted, true},
		{"a string slice", a.Spec.Names, c.Spec.Names, true},
		{"other tolerations", a.Spec.Tolerations, c.Spec.Tolerations, false},
		{"other sources", a.Spec.Sources, c.Spec.Sources, false},
		{"bytes", a.Spec.Raw, b.Spec.Raw, false},
		{"interfaces", a.Spec.Any, b.Spec.Any, false},
	} {
		if got := same(tc.x, tc.y); got != tc.wantShared {
			t.Errorf("%s: shared %v, want %v", tc.name, got, tc.wantShared)
		}
	}
	want := newShObj("c", 60, "other")
	if !reflect.DeepEqual(c, want) {
		t.Errorf("c changed by sharing: %+v", c.Spec)
	}
	if cap(b.Spec.Tolerations) != len(b.Spec.Tolerations) {
		t.Errorf("a shared slice has room to append in place (cap %d, len %d)", cap(b.Spec.Tolerations), len(b.Spec.Tolerations))
	}
}

// A full table starts over; values handed out keep their content.
func TestValueTableBounded(t *testing.T) {
	in := newInterner()
	first := newShObj("first", 0, "p")
	in.object(first)
	for i := range maxSharedValues {
		in.object(newShObj("x", int64(i+1), "p"))
	}
	if n := len(in.values.values); n > maxSharedValues {
		t.Errorf("table holds %d values, at most %d", n, maxSharedValues)
	}
	if !reflect.DeepEqual(first, newShObj("first", 0, "p")) {
		t.Errorf("a value handed out changed: %+v", first.Spec)
	}
}
