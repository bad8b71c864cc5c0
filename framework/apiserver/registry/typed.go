package registry

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	// ValidateStatusUpdateFunc checks a write through the status subresource
	// (see StatusValidator); nil means ValidateUpdate.
	ValidateStatusUpdateFunc func(obj, old *T) field.ErrorList
}

var (
	_ Strategy      = Typed[struct{}]{}
	_ TypedStrategy = Typed[struct{}]{}

	_ OwnedCanonicalizer = Typed[struct{}]{}
)

// Canonicalize implements Strategy.
func (s Typed[T]) Canonicalize(obj map[string]any) (map[string]any, []string, field.ErrorList) {
	out, _, unknown, errs := s.CanonicalizeTyped(obj)
	return out, unknown, errs
}

// CanonicalizeTyped implements TypedStrategy: the Decoded value is the *T that
// out was encoded from.
func (s Typed[T]) CanonicalizeTyped(obj map[string]any) (map[string]any, Decoded, []string, field.ErrorList) {
	// canonicalizeFast refuses keys its plan does not know, and those are a
	// subset of the fields UnknownFields knows: when it succeeds, there are no
	// unknown fields.
	if out, dec, errs, ok := s.canonicalizeFast(obj, false); ok {
		return out, dec, nil, errs
	}
	return s.canonicalizeJSON(obj, UnknownFields(obj, reflect.TypeFor[T]()))
}

// CanonicalizeOwned implements OwnedCanonicalizer: out is obj, or shares its
// maps and slices, wherever the canonical form has obj's values.
func (s Typed[T]) CanonicalizeOwned(obj map[string]any) (map[string]any, Decoded, []string, field.ErrorList) {
	if out, dec, errs, ok := s.canonicalizeFast(obj, true); ok {
		return out, dec, nil, errs
	}
	return s.canonicalizeJSON(obj, UnknownFields(obj, reflect.TypeFor[T]()))
}

// canonicalizeJSON is CanonicalizeTyped through JSON text, the reference for
// canonicalizeFast.
func (s Typed[T]) canonicalizeJSON(obj map[string]any, unknown []string) (map[string]any, Decoded, []string, field.ErrorList) {
	src := any(obj)
	if len(unknown) > 0 {
		// encoding/json matches field names case-insensitively; Kubernetes'
		// decoder does not. Unknown keys ("meTadata") are dropped first so they
		// cannot stand in for the fields they resemble.
		src = withoutUnknown(obj, reflect.TypeFor[T]())
	}
	raw, err := api.EncodeJSON(src)
	if err != nil {
		return nil, Decoded{}, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	t := new(T)
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, Decoded{}, unknown, field.ErrorList{decodeError(err)}
	}
	if s.Default != nil {
		s.Default(t)
	}
	out, err := ToMap(t)
	if err != nil {
		return nil, Decoded{}, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	return out, Decoded{Value: t, Meta: objectMetaOf(t)}, unknown, nil
}

// canonicalizeFast is CanonicalizeTyped for an object without unknown fields,
// by decodeFast and encodeFast (encodeReuse when reuse is set: out then
// shares obj's values); ok is false when decodeFast is not sure (the caller
// then takes the JSON round trip).
func (s Typed[T]) canonicalizeFast(obj map[string]any, reuse bool) (map[string]any, Decoded, field.ErrorList, bool) {
	t := new(T)
	p := planOf(reflect.TypeFor[T]())
	if !decodeFast(obj, p, reflect.ValueOf(t).Elem(), 0) {
		return nil, Decoded{}, nil, false
	}
	if s.Default != nil {
		s.Default(t)
	}
	var (
		v  any
		ok bool
	)
	if reuse {
		v, _, ok = encodeReuse(reflect.ValueOf(t).Elem(), p, obj, 0)
	} else {
		v, ok = encodeFast(reflect.ValueOf(t).Elem(), p, 0)
	}
	var out map[string]any
	if ok {
		out, _ = v.(map[string]any)
	}
	if out == nil {
		// Defaulting made something this path does not encode: the reference.
		var err error
		if out, err = ToMap(t); err != nil {
			return nil, Decoded{}, field.ErrorList{field.InternalError(nil, err)}, true
		}
	}
	return out, Decoded{Value: t, Meta: objectMetaOf(t)}, nil, true
}

// ValidateCreateTyped implements TypedStrategy.
func (s Typed[T]) ValidateCreateTyped(ctx context.Context, obj map[string]any, d Decoded) field.ErrorList {
	t, ok := d.Value.(*T)
	if !ok {
		return s.ValidateCreate(ctx, obj)
	}
	if s.Validate == nil {
		return nil
	}
	return s.Validate(t)
}

// objectMetaOf returns the metadata of *T: its api.ObjectMeta field with the JSON
// name "metadata", or nil.
func objectMetaOf[T any](t *T) *api.ObjectMeta {
	idx := infoOf(reflect.TypeFor[T]()).metaIndex
	if idx == nil {
		return nil
	}
	m, _ := reflect.ValueOf(t).Elem().FieldByIndex(idx).Addr().Interface().(*api.ObjectMeta)
	return m
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
	return validateTypedUpdate(obj, old, s.ValidateUpdateFunc)
}

// validateTypedUpdate decodes obj and old into T and calls validate on them.
func validateTypedUpdate[T any](obj, old map[string]any, validate func(obj, old *T) field.ErrorList) field.ErrorList {
	t, err := FromMap[T](obj)
	if err != nil {
		return field.ErrorList{decodeError(err)}
	}
	o, err := FromMap[T](old)
	if err != nil {
		return field.ErrorList{decodeError(err)}
	}
	return validate(t, o)
}

// FromMap decodes a JSON-compatible map into a new T.
func FromMap[T any](obj map[string]any) (*T, error) {
	raw, err := api.EncodeJSON(obj)
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
	if !hasUnknown(obj, t) {
		return nil // the common case, without building paths or sorting keys
	}
	var out []string
	walkUnknown(obj, t, "", &out)
	return out
}

// PruneUnknown removes from obj, in place, the keys that UnknownFields reports
// and returns their paths; obj is left alone when there are none.
func PruneUnknown(obj map[string]any, t reflect.Type) []string {
	unknown := UnknownFields(obj, t)
	if unknown == nil {
		return nil
	}
	pruned := withoutUnknown(obj, t).(map[string]any)
	clear(obj)
	maps.Copy(obj, pruned)
	return unknown
}

// hasUnknown reports whether walkUnknown would report anything.
func hasUnknown(v any, t reflect.Type) bool {
	ti := infoOf(t)
	if ti.opaque {
		return false
	}
	switch ti.elem.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, e := range m {
			ft, ok := ti.fields[k]
			if !ok || hasUnknown(e, ft) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range s {
			if hasUnknown(e, ti.elem.Elem()) {
				return true
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		et := ti.elem.Elem()
		if et.Kind() == reflect.String {
			return false
		}
		for _, e := range m {
			if hasUnknown(e, et) {
				return true
			}
		}
	}
	return false
}

// typeInfo is what walkUnknown and objectMetaOf need of a type, computed once.
type typeInfo struct {
	elem      reflect.Type            // t without pointers
	opaque    bool                    // decoded by its own UnmarshalJSON, or any value
	fields    map[string]reflect.Type // JSON field names of a struct
	metaIndex []int                   // index of the api.ObjectMeta "metadata" field
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if v, ok := typeInfos.Load(t); ok {
		return v.(*typeInfo)
	}
	e := t
	for e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	ti := &typeInfo{elem: e}
	ti.opaque = e == rawMessageType || e.Kind() == reflect.Interface || reflect.PointerTo(e).Implements(jsonUnmarshaler)
	if e.Kind() == reflect.Struct && !ti.opaque {
		ti.fields = jsonFields(e)
		for i := 0; i < e.NumField(); i++ {
			f := e.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Type == objectMetaType && name == "metadata" {
				ti.metaIndex = f.Index
				break
			}
		}
	}
	v, _ := typeInfos.LoadOrStore(t, ti)
	return v.(*typeInfo)
}

var objectMetaType = reflect.TypeFor[api.ObjectMeta]()

func walkUnknown(v any, t reflect.Type, path string, out *[]string) {
	ti := infoOf(t)
	if ti.opaque {
		return
	}
	switch ti.elem.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if len(m) == 1 {
			for k, e := range m {
				if ft, ok := ti.fields[k]; ok {
					walkUnknown(e, ft, join(path, k), out)
				} else {
					*out = append(*out, join(path, k))
				}
			}
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := ti.fields[k]
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
			walkUnknown(e, ti.elem.Elem(), path+"["+strconv.Itoa(i)+"]", out)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		et := ti.elem.Elem()
		if et.Kind() == reflect.String {
			return // map[string]string: nothing below can be unknown
		}
		for k, e := range m {
			walkUnknown(e, et, join(path, k), out)
		}
	}
}

// withoutUnknown returns v without the keys walkUnknown reports, copying the
// maps and slices on the way; v itself is not changed.
func withoutUnknown(v any, t reflect.Type) any {
	ti := infoOf(t)
	if ti.opaque {
		return v
	}
	switch ti.elem.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			if ft, ok := ti.fields[k]; ok {
				out[k] = withoutUnknown(e, ft)
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(s))
		for i, e := range s {
			out[i] = withoutUnknown(e, ti.elem.Elem())
		}
		return out
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok || ti.elem.Elem().Kind() == reflect.String {
			return v
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = withoutUnknown(e, ti.elem.Elem())
		}
		return out
	}
	return v
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
