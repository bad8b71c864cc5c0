package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/operators/generate/markers"
)

// Decl is what the source says of a named type: its doc comment, its
// markers and those of its struct fields.
type Decl struct {
	Doc     string
	Markers markers.Set
	Pos     token.Position
	// Fields are the struct's fields in declaration order (one entry per
	// name, as go/types lists them).
	Fields []FieldDecl
	// Optional is set when the declaring package has
	// +kubebuilder:validation:Optional: fields are then optional unless
	// marked required.
	Optional bool
}

// FieldDecl is a struct field's doc comment and markers.
type FieldDecl struct {
	Doc     string
	Markers markers.Set
	Pos     token.Position
}

// Builder turns Go types into OpenAPI v3 schemas with controller-gen's
// rules. It is not safe for concurrent use.
type Builder struct {
	// Decl returns the declaration of a named type (required).
	Decl func(*types.TypeName) (*Decl, error)
	// AllowDangerousTypes allows float fields (type number).
	AllowDangerousTypes bool

	cache map[*types.TypeName]*crdapi.JSONSchemaProps
	errs  []error
}

// Err returns every error found so far.
func (b *Builder) Err() error { return errors.Join(b.errs...) }

func (b *Builder) errorf(pos token.Position, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if pos.IsValid() {
		msg = pos.String() + ": " + msg
	}
	b.errs = append(b.errs, errors.New(msg))
}

// Named returns the schema of a named type: a known type's fixed schema
// (known.go), or the schema of its underlying type with its doc comment as
// description and its markers applied. The result is the caller's to
// change.
func (b *Builder) Named(obj *types.TypeName) crdapi.JSONSchemaProps {
	if b.cache == nil {
		b.cache = map[*types.TypeName]*crdapi.JSONSchemaProps{}
	}
	if s, ok := b.cache[obj]; ok {
		return deepCopy(*s)
	}
	if obj.Pkg() != nil {
		if s, ok := Known(obj.Pkg().Path(), obj.Name()); ok {
			b.cache[obj] = &s
			return deepCopy(s)
		}
	}
	// A recursive type refers to itself as {} (controller-gen's in-progress
	// schema).
	b.cache[obj] = &crdapi.JSONSchemaProps{}
	s := b.named(obj)
	b.cache[obj] = &s
	return deepCopy(s)
}

func (b *Builder) named(obj *types.TypeName) crdapi.JSONSchemaProps {
	if obj.Pkg() == nil {
		b.errorf(token.Position{}, "unsupported type %s", obj.Name())
		return crdapi.JSONSchemaProps{}
	}
	d, err := b.Decl(obj)
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("type %s.%s: %w", obj.Pkg().Path(), obj.Name(), err))
		return crdapi.JSONSchemaProps{}
	}
	t := obj.Type()
	switch {
	case implements(t, jsonMarshaler):
		// Whatever the marshaler writes: only a Type marker says what.
		s := crdapi.JSONSchemaProps{}
		b.apply(&s, d.Markers)
		if s.Type != "" {
			return s
		}
	case implements(t, textMarshaler):
		s := crdapi.JSONSchemaProps{Type: "string"}
		b.apply(&s, d.Markers)
		if s.Type != "string" {
			b.errorf(d.Pos, "%s implements encoding.TextMarshaler but its schema type is %q, not string", obj.Name(), s.Type)
		}
		return s
	}
	var s crdapi.JSONSchemaProps
	if st, ok := t.Underlying().(*types.Struct); ok {
		s = b.structSchema(obj, st, d)
	} else {
		s = b.unnamed(t.Underlying(), d.Pos)
	}
	s.Description = d.Doc
	b.apply(&s, d.Markers)
	return s
}

// typeOf returns the schema of a field's or an element's type: a named
// type's schema, or an unnamed one's (pointers are transparent).
func (b *Builder) typeOf(t types.Type, pos token.Position) (s crdapi.JSONSchemaProps, named bool) {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		return b.typeOf(p.Elem(), pos)
	}
	if n, ok := t.(*types.Named); ok {
		return b.Named(n.Obj()), true
	}
	return b.unnamed(t, pos), false
}

func (b *Builder) unnamed(t types.Type, pos token.Position) crdapi.JSONSchemaProps {
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		typ, format, err := basic(t, b.AllowDangerousTypes)
		if err != nil {
			b.errorf(pos, "%v", err)
		}
		return crdapi.JSONSchemaProps{Type: typ, Format: format}
	case *types.Pointer:
		s, _ := b.typeOf(t.Elem(), pos)
		return s
	case *types.Named:
		s, _ := b.typeOf(t, pos)
		return s
	case *types.Slice:
		return b.array(t.Elem(), true, pos)
	case *types.Array:
		return b.array(t.Elem(), false, pos)
	case *types.Map:
		if !stringKey(t.Key()) {
			b.errorf(pos, "map keys must be strings or implement encoding.TextMarshaler, not %s", t.Key())
			return crdapi.JSONSchemaProps{}
		}
		v, _ := b.typeOf(t.Elem(), pos)
		return crdapi.JSONSchemaProps{Type: "object", AdditionalProperties: &crdapi.JSONSchemaPropsOrBool{Allows: true, Schema: &v}}
	case *types.Struct:
		b.errorf(pos, "inline struct types are not supported, use a named type instead")
	case *types.Interface:
		b.errorf(pos, "interface type is not supported in CRD schemas; use an explicit type, or apiextensions JSON with +kubebuilder:validation:Schemaless")
	default:
		b.errorf(pos, "unsupported type %s", t)
	}
	return crdapi.JSONSchemaProps{}
}

func (b *Builder) array(elem types.Type, slice bool, pos token.Position) crdapi.JSONSchemaProps {
	if bt, ok := types.Unalias(elem).(*types.Basic); ok && slice && bt.Kind() == types.Byte {
		return crdapi.JSONSchemaProps{Type: "string", Format: "byte"}
	}
	items, _ := b.typeOf(elem, pos)
	return crdapi.JSONSchemaProps{Type: "array", Items: &crdapi.JSONSchemaPropsOrArray{Schema: &items}}
}

func stringKey(t types.Type) bool {
	if implements(t, textMarshaler) {
		return true
	}
	bt, ok := t.Underlying().(*types.Basic)
	return ok && bt.Info()&types.IsString != 0
}

// structSchema builds an object schema from a named struct type's fields.
func (b *Builder) structSchema(obj *types.TypeName, st *types.Struct, d *Decl) crdapi.JSONSchemaProps {
	s := crdapi.JSONSchemaProps{Type: "object", Properties: map[string]crdapi.JSONSchemaProps{}}
	var inline []crdapi.JSONSchemaProps
	for i := range st.NumFields() {
		f := st.Field(i)
		var fd FieldDecl
		if i < len(d.Fields) {
			fd = d.Fields[i]
		}
		tag, ok := reflect.StructTag(st.Tag(i)).Lookup("json")
		if !ok {
			b.errorf(fd.Pos, "struct field %s of %s has no json tag", f.Name(), obj.Name())
			continue
		}
		opts := strings.Split(tag, ",")
		if len(opts) == 1 && opts[0] == "-" {
			continue
		}
		name, isInline, omitEmpty := opts[0], false, false
		for _, o := range opts[1:] {
			switch o {
			case "inline":
				isInline = true
			case "omitempty", "omitzero":
				omitEmpty = true
			}
		}
		isInline = isInline || name == ""
		fm := fd.Markers
		switch {
		case fm.Has("kubebuilder:validation:Optional"):
		case fm.Has("kubebuilder:validation:Required"):
			s.Required = append(s.Required, name)
		case fm.Has("optional"), fm.Has("k8s:optional"):
		case fm.Has("required"), fm.Has("k8s:required"):
			s.Required = append(s.Required, name)
		case !d.Optional && !isInline && !omitEmpty:
			s.Required = append(s.Required, name)
		}
		prop := b.Field(f.Type(), fd)
		if isInline {
			inline = append(inline, prop)
			continue
		}
		s.Properties[name] = prop
	}
	for _, in := range inline {
		if err := merge(&s, in); err != nil {
			b.errorf(d.Pos, "embedded field of %s: %v", obj.Name(), err)
		}
	}
	if len(s.Required) > 0 {
		s.Required = sortedUnique(s.Required)
	}
	return s
}

// Field returns the schema of a struct field of type t: its type's schema
// with the field's doc comment (when it has one) and markers over it.
func (b *Builder) Field(t types.Type, fd FieldDecl) crdapi.JSONSchemaProps {
	if fd.Markers.Has("kubebuilder:validation:Schemaless") {
		s := crdapi.JSONSchemaProps{Description: fd.Doc}
		b.apply(&s, fd.Markers)
		return s
	}
	s, named := b.typeOf(t, fd.Pos)
	if !named {
		s.Description = fd.Doc
		b.apply(&s, fd.Markers)
		return s
	}
	// controller-gen: a reference to the type plus the field's own schema,
	// flattened; the field's doc wins over the type's.
	own := crdapi.JSONSchemaProps{Type: s.Type}
	b.apply(&own, fd.Markers)
	desc := s.Description
	if err := merge(&s, own); err != nil {
		b.errorf(fd.Pos, "%v", err)
	}
	s.Description = desc
	if fd.Doc != "" {
		s.Description = fd.Doc
	}
	if own.Title != "" {
		s.Title = own.Title
	}
	if own.Example != nil {
		s.Example = own.Example
	}
	if own.ExternalDocs != nil {
		s.ExternalDocs = own.ExternalDocs
	}
	return s
}

func basic(t *types.Basic, allowFloat bool) (typ, format string, err error) {
	info := t.Info()
	switch {
	case info&types.IsBoolean != 0:
		typ = "boolean"
	case info&types.IsString != 0:
		typ = "string"
	case info&types.IsInteger != 0:
		typ = "integer"
	case info&types.IsFloat != 0:
		if !allowFloat {
			return "", "", errors.New("float fields are not allowed (support varies across languages): use a string or a resource.Quantity, or allow dangerous types")
		}
		typ = "number"
	default:
		return "", "", fmt.Errorf("unsupported type %s", t)
	}
	switch t.Kind() {
	case types.Int32, types.Uint32:
		format = "int32"
	case types.Int64, types.Uint64:
		format = "int64"
	}
	return typ, format, nil
}

var (
	byteSlice = types.NewSlice(types.Typ[types.Byte])
	errorType = types.Universe.Lookup("error").Type()

	jsonMarshaler = types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, "MarshalJSON",
		types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, nil, "", byteSlice),
			types.NewVar(token.NoPos, nil, "", errorType)), false))}, nil).Complete()
	textMarshaler = types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, "MarshalText",
		types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, nil, "", byteSlice),
			types.NewVar(token.NoPos, nil, "", errorType)), false))}, nil).Complete()
)

func implements(t types.Type, iface *types.Interface) bool {
	return types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface)
}

func sortedUnique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func deepCopy(s crdapi.JSONSchemaProps) crdapi.JSONSchemaProps {
	raw, err := json.Marshal(s)
	if err != nil {
		return s
	}
	var out crdapi.JSONSchemaProps
	if err := json.Unmarshal(raw, &out); err != nil {
		return s
	}
	return out
}
