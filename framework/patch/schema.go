package patch

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Schema is the strategic-merge-patch schema of one Go struct type, read from
// its struct tags: `json` names fields (anonymous embedded structs without a
// name, or with ",inline", are flattened), `patchStrategy` ("merge", "replace",
// "retainKeys" or a comma-separated combination) and `patchMergeKey` describe
// lists. Interfaces, map[string]any, json.RawMessage, []byte and types with
// their own UnmarshalJSON or UnmarshalText are leaves, replaced as a whole.
//
// A Schema learns nested types lazily and remembers them; it is safe for
// concurrent use. Build one per kind and reuse it.
type Schema struct {
	root reflect.Type

	// mu guards types.
	mu    sync.Mutex
	types map[reflect.Type]*typeInfo
}

// NewSchema returns the schema of t, which must be a struct type or a pointer
// to one.
func NewSchema(t reflect.Type) (*Schema, error) {
	if t == nil {
		return nil, fmt.Errorf("patch: schema type is nil")
	}
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("patch: schema type %s is not a struct", t)
	}
	return &Schema{root: t, types: map[reflect.Type]*typeInfo{}}, nil
}

// Type returns the struct type the schema describes.
func (s *Schema) Type() reflect.Type { return s.root }

type typeKind int

const (
	kindLeaf typeKind = iota
	kindStruct
	kindMap
	kindList
)

// typeInfo is what strategic merge patch needs to know about one Go type.
type typeInfo struct {
	kind typeKind
	// fields maps JSON names to fields, for kindStruct.
	fields map[string]*fieldInfo
	// elem describes map values (kindMap) or list elements (kindList).
	elem *fieldInfo
}

// fieldInfo describes a struct field, a map value or a list element.
type fieldInfo struct {
	typ        reflect.Type
	merge      bool
	replace    bool
	retainKeys bool
	mergeKey   string
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// info returns what is known about t, learning it on first use. A nil schema
// or type yields nil, meaning "unknown": merge objects, replace lists.
func (s *Schema) info(t reflect.Type) *typeInfo {
	if s == nil || t == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ti, ok := s.types[t]; ok {
		return ti
	}
	ti := buildTypeInfo(t)
	s.types[t] = ti
	return ti
}

func buildTypeInfo(t reflect.Type) *typeInfo {
	if t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return &typeInfo{kind: kindLeaf}
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := map[string]*fieldInfo{}
		collectFields(t, fields, map[reflect.Type]bool{})
		return &typeInfo{kind: kindStruct, fields: fields}
	case reflect.Map:
		e := deref(t.Elem())
		if e.Kind() == reflect.Interface {
			return &typeInfo{kind: kindLeaf}
		}
		return &typeInfo{kind: kindMap, elem: &fieldInfo{typ: e}}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &typeInfo{kind: kindLeaf}
		}
		return &typeInfo{kind: kindList, elem: &fieldInfo{typ: deref(t.Elem())}}
	default:
		return &typeInfo{kind: kindLeaf}
	}
}

// collectFields adds the JSON fields of struct t to out. Fields declared
// directly on t win over fields promoted from embedded structs.
func collectFields(t reflect.Type, out map[string]*fieldInfo, visiting map[reflect.Type]bool) {
	if visiting[t] {
		return
	}
	visiting[t] = true
	defer delete(visiting, t)
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := deref(f.Type); et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := out[name]; dup {
			continue
		}
		fi := &fieldInfo{typ: deref(f.Type), mergeKey: f.Tag.Get("patchMergeKey")}
		for _, st := range strings.Split(f.Tag.Get("patchStrategy"), ",") {
			switch strings.TrimSpace(st) {
			case "merge":
				fi.merge = true
			case "replace":
				fi.replace = true
			case "retainKeys":
				fi.retainKeys = true
			}
		}
		out[name] = fi
	}
	for _, et := range embedded {
		collectFields(et, out, visiting)
	}
}
