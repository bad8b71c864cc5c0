package fieldmanager

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Type is the merge schema of one kind: how each field, list and map of its
// objects is owned and merged.
type Type struct {
	schema *schema.Schema
	ref    schema.TypeRef
	// zero is the empty object a create starts from: the Go type's zero
	// value as JSON (structs that are not omitted are there, as in
	// Kubernetes' typed objects), or an empty map. Read only.
	zero map[string]any
	// compiled is the schema resolved for the walk of creates.
	compiled compiled
}

// Names of the untyped definitions every schema carries (the first two as
// Kubernetes names them).
const (
	untypedAtomic  = "__untyped_atomic_"
	untypedDeduced = "__untyped_deduced_"
	// untypedScalar is a Go string, bool or number field: a scalar only (as
	// Kubernetes' OpenAPI types them), so that comparing it does not try it
	// as a map first (untypedAtomic's walk formats and drops an "expected
	// map" error for every scalar it meets: 5 % of a create's CPU).
	untypedScalar = "__untyped_scalar_"
)

func namedRef(name string) schema.TypeRef { return schema.TypeRef{NamedType: &name} }

func relationship(r schema.ElementRelationship) *schema.ElementRelationship { return &r }

// untypedDefs are the definitions of untypedAtomic (a scalar, list or map
// owned as a whole) and untypedDeduced (maps merged key by key, lists owned
// whole: x-kubernetes-preserve-unknown-fields).
func untypedDefs() []schema.TypeDef {
	scalar := schema.Untyped
	defs := []schema.TypeDef{
		{Name: untypedAtomic, Atom: schema.Atom{
			Scalar: &scalar,
			List:   &schema.List{ElementType: namedRef(untypedAtomic), ElementRelationship: schema.Atomic},
			Map:    &schema.Map{ElementType: namedRef(untypedAtomic), ElementRelationship: schema.Atomic},
		}},
		{Name: untypedScalar, Atom: schema.Atom{Scalar: &scalar}},
	}
	// Deduced maps nest granularly maxDeducedDepth levels deep, then are
	// owned whole: free-form fields can be nested thousands of levels, and
	// field sets cost quadratic time in their depth.
	for i := range maxDeducedDepth {
		elem := namedRef(deducedName(i + 1))
		if i == maxDeducedDepth-1 {
			elem = namedRef(untypedAtomic)
		}
		defs = append(defs, schema.TypeDef{Name: deducedName(i), Atom: schema.Atom{
			Scalar: &scalar,
			List:   &schema.List{ElementType: namedRef(untypedAtomic), ElementRelationship: schema.Atomic},
			Map:    &schema.Map{ElementType: elem, ElementRelationship: schema.Separable},
		}})
	}
	return defs
}

// maxDeducedDepth bounds how deep free-form maps are tracked field by field.
const maxDeducedDepth = 32

func deducedName(level int) string {
	if level == 0 {
		return untypedDeduced
	}
	return fmt.Sprintf("%s%d", untypedDeduced, level)
}

// typed turns obj into a value of t. AllowDuplicates lets objects that already
// hold duplicate list keys be read, as Kubernetes does for live objects.
func (t *Type) typed(obj map[string]any, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return typed.AsTyped(value.NewValueInterface(obj), t.schema, t.ref, opts...)
}

// unvalidated is typed without checking obj against the schema first.
func (t *Type) unvalidated(obj map[string]any) *typed.TypedValue {
	return typed.AsTypedUnvalidated(value.NewValueInterface(obj), t.schema, t.ref)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	labelSelector   = reflect.TypeFor[api.LabelSelector]()
	atomicStruct    = reflect.TypeFor[AtomicStruct]()
)

// AtomicStruct is implemented by struct types that a manager owns as a whole
// wherever they appear, as Kubernetes marks them +structType=atomic (object
// references, key selectors, node selector terms, ...). The method does
// nothing; its presence is the marker.
type AtomicStruct interface {
	AtomicStruct()
}

// TypeOf derives the merge schema of the Go struct type t from its tags, as
// Kubernetes derives it from the same markers in its OpenAPI:
//   - `json` names fields; anonymous structs without a name are inlined;
//   - a slice is a list: `listType:"map"` with `listMapKeys:"a,b"`,
//     `listType:"set"` or `listType:"atomic"`; without listType, a slice with
//     `patchStrategy:"merge"` is a map list keyed by `patchMergeKey` (structs)
//     or a set (scalars), any other slice is atomic;
//   - a map is granular unless `mapType:"atomic"`; a struct field is granular
//     unless `structType:"atomic"` or its type is atomic: api.LabelSelector and
//     types with an AtomicStruct method (Kubernetes' +structType=atomic on a
//     type), which a field's `structType:"granular"` makes granular again;
//   - `default:"X"` is the default of a string field that keys a map list;
//   - types with their own JSON or text decoding, interfaces and []byte are
//     scalars owned as a whole.
func TypeOf(t reflect.Type) (*Type, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("fieldmanager: type %v is not a struct", t)
	}
	b := &goBuilder{names: map[reflect.Type]string{}, defs: untypedDefs()}
	ref := b.structRef(t)
	zero, err := json.Marshal(reflect.New(t).Interface())
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: encode the zero %v: %w", t, err)
	}
	z, err := api.DecodeMap(zero)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: decode the zero %v: %w", t, err)
	}
	return &Type{schema: &schema.Schema{Types: b.defs}, ref: ref, zero: z}, nil
}

type goBuilder struct {
	names map[reflect.Type]string
	defs  []schema.TypeDef
}

func isLeaf(t reflect.Type) bool {
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return false
	case reflect.Slice, reflect.Array:
		return t.Elem().Kind() == reflect.Uint8
	}
	return true
}

// isPlainScalar reports whether the leaf type t is a Go string, bool or
// number (or []byte, a base64 string) without a JSON or text encoding of its
// own: its JSON is always a scalar.
func isPlainScalar(t reflect.Type) bool {
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	}
	return false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// structRef returns a reference to the named definition of struct t, adding
// it (and what it refers to) on first use.
func (b *goBuilder) structRef(t reflect.Type) schema.TypeRef {
	if name, ok := b.names[t]; ok {
		return namedRef(name)
	}
	name := fmt.Sprintf("%s.%s#%d", t.PkgPath(), t.Name(), len(b.defs))
	b.names[t] = name
	i := len(b.defs)
	b.defs = append(b.defs, schema.TypeDef{Name: name})
	m := &schema.Map{ElementRelationship: schema.Separable}
	if t == labelSelector || t.Implements(atomicStruct) || reflect.PointerTo(t).Implements(atomicStruct) {
		m.ElementRelationship = schema.Atomic
	}
	seen := map[string]bool{}
	b.fields(t, m, seen, map[reflect.Type]bool{})
	b.defs[i].Atom = schema.Atom{Map: m}
	return namedRef(name)
}

// fields adds the JSON fields of t to m; fields declared on t win over those
// of inlined structs.
func (b *goBuilder) fields(t reflect.Type, m *schema.Map, seen map[string]bool, visiting map[reflect.Type]bool) {
	if visiting[t] {
		return
	}
	visiting[t] = true
	defer delete(visiting, t)
	var inline []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			if et := deref(f.Type); et.Kind() == reflect.Struct && !isLeaf(et) {
				inline = append(inline, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		sf := schema.StructField{Name: name, Type: b.fieldRef(f.Type, f.Tag)}
		if d, ok := f.Tag.Lookup("default"); ok {
			sf.Default = d
		}
		m.Fields = append(m.Fields, sf)
	}
	for _, et := range inline {
		b.fields(et, m, seen, visiting)
	}
}

// fieldRef is the type of a field (or map value, or list element) of Go type
// t with the struct tags tag.
func (b *goBuilder) fieldRef(t reflect.Type, tag reflect.StructTag) schema.TypeRef {
	t = deref(t)
	if isLeaf(t) {
		if isPlainScalar(t) {
			return namedRef(untypedScalar)
		}
		return namedRef(untypedAtomic)
	}
	switch t.Kind() {
	case reflect.Struct:
		ref := b.structRef(t)
		switch tag.Get("structType") {
		case "atomic":
			ref.ElementRelationship = relationship(schema.Atomic)
		case "granular":
			ref.ElementRelationship = relationship(schema.Separable)
		}
		return ref
	case reflect.Map:
		rel := schema.Separable
		if tag.Get("mapType") == "atomic" {
			rel = schema.Atomic
		}
		return schema.TypeRef{Inlined: schema.Atom{Map: &schema.Map{
			ElementType: b.fieldRef(t.Elem(), ""), ElementRelationship: rel}}}
	case reflect.Slice, reflect.Array:
		elem := deref(t.Elem())
		l := &schema.List{ElementType: b.fieldRef(elem, ""), ElementRelationship: schema.Atomic}
		merge := strings.Contains(tag.Get("patchStrategy"), "merge")
		switch lt := tag.Get("listType"); {
		case lt == "map":
			l.ElementRelationship = schema.Associative
			l.Keys = splitKeys(tag.Get("listMapKeys"))
		case lt == "set":
			l.ElementRelationship = schema.Associative
		case lt == "atomic":
		case merge && isLeaf(elem):
			l.ElementRelationship = schema.Associative
		case merge && tag.Get("patchMergeKey") != "":
			l.ElementRelationship = schema.Associative
			l.Keys = []string{tag.Get("patchMergeKey")}
		}
		return schema.TypeRef{Inlined: schema.Atom{List: l}}
	}
	return namedRef(untypedAtomic)
}

func splitKeys(s string) []string {
	var keys []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// TypeFromOpenAPI derives the merge schema of a custom resource from its
// structural OpenAPI v3 schema (as JSON: properties, items,
// additionalProperties, x-kubernetes-list-type, x-kubernetes-list-map-keys,
// x-kubernetes-map-type, x-kubernetes-preserve-unknown-fields,
// x-kubernetes-int-or-string, default). Lists without a list type are atomic,
// objects without a map type granular, as in Kubernetes. apiVersion, kind and
// metadata are always known; metadata as meta (the ObjectMeta Go type).
func TypeFromOpenAPI(s map[string]any, meta reflect.Type) (*Type, error) {
	b := &goBuilder{names: map[reflect.Type]string{}, defs: untypedDefs()}
	metaRef := b.structRef(deref(meta))
	root := openAPIAtom(s, b)
	if root.Map == nil {
		// No schema: every field is known, maps merge key by key.
		root.Map = &schema.Map{ElementRelationship: schema.Separable, ElementType: namedRef(untypedDeduced)}
		root.Scalar, root.List = nil, nil
	}
	have := map[string]bool{}
	for _, f := range root.Map.Fields {
		have[f.Name] = true
	}
	for _, f := range []schema.StructField{
		{Name: "apiVersion", Type: namedRef(untypedAtomic)},
		{Name: "kind", Type: namedRef(untypedAtomic)},
	} {
		if !have[f.Name] {
			root.Map.Fields = append(root.Map.Fields, f)
		}
	}
	fields := root.Map.Fields[:0]
	for _, f := range root.Map.Fields {
		if f.Name != "metadata" {
			fields = append(fields, f)
		}
	}
	root.Map.Fields = append(fields, schema.StructField{Name: "metadata", Type: metaRef})
	name := "__root_"
	b.defs = append(b.defs, schema.TypeDef{Name: name, Atom: root})
	return &Type{schema: &schema.Schema{Types: b.defs}, ref: namedRef(name), zero: map[string]any{}}, nil
}

// openAPIAtom is the atom of one OpenAPI schema node.
func openAPIAtom(s map[string]any, b *goBuilder) schema.Atom {
	if s == nil {
		return schema.Atom{}
	}
	ref := openAPIRef(s, b)
	if ref.NamedType != nil {
		// Only the untyped definitions are named here; inline a copy.
		for _, d := range b.defs {
			if d.Name == *ref.NamedType {
				return d.Atom
			}
		}
	}
	return ref.Inlined
}

func openAPIRef(s map[string]any, b *goBuilder) schema.TypeRef {
	if s == nil {
		return namedRef(untypedDeduced)
	}
	if v, _ := s["x-kubernetes-int-or-string"].(bool); v {
		return namedRef(untypedAtomic)
	}
	preserve, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	typ, _ := s["type"].(string)
	props, _ := s["properties"].(map[string]any)
	switch {
	case typ == "array":
		items, _ := s["items"].(map[string]any)
		l := &schema.List{ElementType: openAPIRef(items, b), ElementRelationship: schema.Atomic}
		switch lt, _ := s["x-kubernetes-list-type"].(string); lt {
		case "map":
			l.ElementRelationship = schema.Associative
			for _, k := range asSlice(s["x-kubernetes-list-map-keys"]) {
				if ks, ok := k.(string); ok {
					l.Keys = append(l.Keys, ks)
				}
			}
		case "set":
			l.ElementRelationship = schema.Associative
		}
		if items == nil {
			l.ElementType = namedRef(untypedAtomic)
		}
		return schema.TypeRef{Inlined: schema.Atom{List: l}}
	case typ == "object" || props != nil || s["additionalProperties"] != nil:
		m := &schema.Map{ElementRelationship: schema.Separable}
		if mt, _ := s["x-kubernetes-map-type"].(string); mt == "atomic" {
			m.ElementRelationship = schema.Atomic
		}
		for _, name := range sortedKeys(props) {
			p, _ := props[name].(map[string]any)
			sf := schema.StructField{Name: name, Type: openAPIRef(p, b)}
			if d, ok := p["default"]; ok {
				sf.Default = d
			}
			m.Fields = append(m.Fields, sf)
		}
		switch ap := s["additionalProperties"].(type) {
		case map[string]any:
			m.ElementType = openAPIRef(ap, b)
		case bool:
			if ap {
				m.ElementType = namedRef(untypedDeduced)
			}
		}
		if preserve {
			m.ElementType = namedRef(untypedDeduced)
		}
		if props == nil && s["additionalProperties"] == nil && !preserve {
			// An object without properties keeps nothing after pruning;
			// treat what is there as a whole.
			m.ElementType = namedRef(untypedAtomic)
		}
		return schema.TypeRef{Inlined: schema.Atom{Map: m}}
	case preserve:
		return namedRef(untypedDeduced)
	case typ == "":
		return namedRef(untypedDeduced)
	}
	return namedRef(untypedAtomic)
}

func asSlice(v any) []any {
	if s, ok := v.([]any); ok {
		return s
	}
	if s, ok := v.([]string); ok {
		out := make([]any, len(s))
		for i, e := range s {
			out[i] = e
		}
		return out
	}
	return nil
}
