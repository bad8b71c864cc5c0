package registry

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Typed adapts kind-specific functions over a Go struct T into a Strategy. The Go
// type is the schema: fields it does not declare are unknown (and dropped), values
// of the wrong JSON type are errors.
type Typed[T any] struct {
	// Default fills in defaults; may be nil.
	Default func(obj *T)
	// Validate checks a new object; may be nil.
	Validate func(obj *T) field.ErrorList
	// ValidateUpdate checks an update; nil means Validate(obj).
	ValidateUpdateFunc func(obj, old *T) field.ErrorList
}

var _ Strategy = Typed[struct{}]{}

// Canonicalize implements Strategy.
func (s Typed[T]) Canonicalize(obj map[string]any) (map[string]any, []string, field.ErrorList) {
	var zero T
	unknown := UnknownFields(obj, reflect.TypeOf(zero))
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	var t T
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, unknown, field.ErrorList{decodeError(err)}
	}
	if s.Default != nil {
		s.Default(&t)
	}
	out, err := ToMap(&t)
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return out, unknown, nil
}

func decodeError(err error) *field.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return field.Invalid(field.NewPath(te.Field), te.Value,
			"expected "+jsonTypeName(te.Type)+", got "+te.Value)
	}
	return field.Invalid(nil, "", err.Error())
}

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// ValidateCreate implements Strategy.
func (s Typed[T]) ValidateCreate(_ context.Context, obj map[string]any) field.ErrorList {
	if s.Validate == nil {
		return nil
	}
	t, err := FromMap[T](obj)
	if err != nil {
		return field.ErrorList{decodeError(err)}
	}
	return s.Validate(t)
}

// ValidateUpdate implements Strategy.
func (s Typed[T]) ValidateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if s.ValidateUpdateFunc == nil {
		return s.ValidateCreate(ctx, obj)
	}
	t, err := FromMap[T](obj)
	if err != nil {
		return field.ErrorList{decodeError(err)}
	}
	o, err := FromMap[T](old)
	if err != nil {
		return field.ErrorList{decodeError(err)}
	}
	return s.ValidateUpdateFunc(t, o)
}

// FromMap decodes a JSON-compatible map into a new T.
func FromMap[T any](obj map[string]any) (*T, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var t T
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// ToMap encodes v into a JSON-compatible map (integers as int64).
func ToMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return api.DecodeMap(raw)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

// UnknownFields lists the paths of keys in obj that the Go type t does not declare,
// in the dotted form Kubernetes reports ("spec.template.spec.foo"), sorted by the
// order they are found.
func UnknownFields(obj map[string]any, t reflect.Type) []string {
	var out []string
	walkUnknown(obj, t, "", &out)
	return out
}

func walkUnknown(v any, t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				*out = append(*out, join(path, k))
				continue
			}
			walkUnknown(m[k], ft, join(path, k), out)
		}
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range s {
			walkUnknown(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", out)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, e := range m {
			walkUnknown(e, t.Elem(), join(path, k), out)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// jsonFields maps the JSON names of a struct's fields (inlined embedded structs
// flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
