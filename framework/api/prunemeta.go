package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// PruneMeta removes from the metadata of obj, held as a JSON-compatible map,
// every key that names no ObjectMeta field exactly, at any depth (owner
// references, managed fields), and returns the removed keys' paths
// ("metadata.namE", "metadata.ownerReferences[0].Kind"). Kubernetes matches
// field names case-sensitively and keeps only ObjectMeta's fields in the
// metadata of custom resources; encoding/json, which MetaFromMap uses, would
// read "namE" as the name. Values are left as they are: decoding reports
// those of the wrong type.
func PruneMeta(obj map[string]any) []string {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	var unknown []string
	pruneStruct(meta, reflect.TypeFor[ObjectMeta](), "metadata", &unknown)
	slices.Sort(unknown)
	return unknown
}

func pruneValue(v any, t reflect.Type, path string, unknown *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return // its own JSON form (times, fieldsV1)
	}
	switch t.Kind() {
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			pruneStruct(m, t, path, unknown)
		}
	case reflect.Slice:
		if items, ok := v.([]any); ok {
			for i, item := range items {
				pruneValue(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", unknown)
			}
		}
	}
}

func pruneStruct(m map[string]any, t reflect.Type, path string, unknown *[]string) {
	for k, v := range m {
		f, ok := jsonField(t, k)
		if !ok {
			delete(m, k)
			*unknown = append(*unknown, path+"."+k)
			continue
		}
		pruneValue(v, f.Type, path+"."+k, unknown)
	}
}

// jsonField returns the field of struct type t whose JSON name is exactly name.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
