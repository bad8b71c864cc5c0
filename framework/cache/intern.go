package cache

import (
	"reflect"
	"unique"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/sharedmaps"
)

// maxInternLen bounds the strings worth interning: label keys and values,
// namespaces, images, enum values. Long strings (annotations holding JSON,
// certificates) are rarely shared.
const maxInternLen = 256

// stringMap is the type of labels, annotations and the like, which objects
// of one workload share (interner.maps).
var stringMap = reflect.TypeFor[map[string]string]()

// interner makes the objects of one cache share memory: short strings are
// interned process-wide (unique), equal map[string]string values (labels,
// annotations, node selectors) are one map per cache, from maps, and equal
// pointed-to values and short slices one value per cache, from values.
// Cached objects are read only (Store), so sharing them is safe.
type interner struct {
	maps   *sharedmaps.Table
	values *valueTable
}

func newInterner() interner { return interner{sharedmaps.NewTable(0), newValueTable()} }

// object interns a typed object that is about to be cached (an Unstructured
// object's strings sit in interface values, which cannot be replaced in
// place, and are left).
func (in interner) object(obj any) {
	if _, ok := obj.(*api.Unstructured); ok {
		return
	}
	in.strings(reflect.ValueOf(obj))
}

// strings replaces every short string reachable from v (a pointer to a
// decoded object) with its canonical copy, so that the thousands of identical
// label values, namespaces and enum strings in a cache share one allocation,
// and every map[string]string with an equal one seen before.
func (in interner) strings(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			in.strings(v.Elem())
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		in.strings(v.Elem())
		in.share(v)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				in.strings(f)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			in.strings(v.Index(i))
		}
		in.share(v)
	case reflect.Array:
		for i := range v.Len() {
			in.strings(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || v.Len() == 0 {
			return
		}
		if v.Type() == stringMap && in.maps != nil {
			if v.CanSet() {
				v.Set(reflect.ValueOf(in.maps.Share(v.Interface().(map[string]string), internMap)))
			}
			return
		}
		kt, et := v.Type().Key(), v.Type().Elem()
		if kt.Kind() != reflect.String {
			return
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(kt).Elem()
			k.Set(it.Key())
			in.strings(k)
			e := reflect.New(et).Elem()
			e.Set(it.Value())
			in.strings(e)
			out.SetMapIndex(k, e)
		}
		if v.CanSet() {
			v.Set(out)
		}
	case reflect.String:
		if s := v.String(); len(s) > 0 && len(s) <= maxInternLen && v.CanSet() {
			v.SetString(unique.Make(s).Value())
		}
	}
}

// share replaces v, a settable pointer or slice whose content is shared
// already, with an equal value seen before.
func (in interner) share(v reflect.Value) {
	if in.values == nil || !v.CanSet() {
		return
	}
	if c, ok := in.values.share(v); ok {
		v.Set(c)
	}
}

// internMap returns a copy of m with its short strings interned.
func internMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[internString(k)] = internString(v)
	}
	return out
}

func internString(s string) string {
	if len(s) == 0 || len(s) > maxInternLen {
		return s
	}
	return unique.Make(s).Value()
}
