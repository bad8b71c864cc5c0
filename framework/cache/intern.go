package cache

import (
	"reflect"
	"unique"

	"github.com/converge-dev/converge/framework/api"
)

// maxInternLen bounds the strings worth interning: label keys and values,
// namespaces, images, enum values. Long strings (annotations holding JSON,
// certificates) are rarely shared.
const maxInternLen = 256

// internObject interns the short strings of a typed object that is about to
// be cached, as lists' items are (an Unstructured object's strings sit in
// interface values, which cannot be replaced in place, and are left).
func internObject(obj any) {
	if _, ok := obj.(*api.Unstructured); ok {
		return
	}
	internStrings(reflect.ValueOf(obj))
}

// internStrings replaces every short string reachable from v (a pointer to a
// decoded object) with its canonical copy, so that the thousands of identical
// label values, namespaces and enum strings in a cache share one allocation.
func internStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			internStrings(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				internStrings(f)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			internStrings(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			internStrings(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || v.Len() == 0 {
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
			internStrings(k)
			e := reflect.New(et).Elem()
			e.Set(it.Value())
			internStrings(e)
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
