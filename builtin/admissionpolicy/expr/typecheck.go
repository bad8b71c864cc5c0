package expr

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/converge-dev/converge/framework/api/field"
)

// DeclaredTypes declares the CEL types of objects, for TypeCheck: object
// types named after their path, one field per property.
type DeclaredTypes struct {
	base    *types.Registry
	structs map[string]map[string]*types.Type
}

// NewDeclaredTypes returns an empty set of declarations.
func NewDeclaredTypes() *DeclaredTypes {
	reg, _ := types.NewRegistry()
	return &DeclaredTypes{base: reg, structs: map[string]map[string]*types.Type{}}
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// FromGo declares the type of a Go API type (its JSON form) under name.
func (d *DeclaredTypes) FromGo(name string, t reflect.Type) *types.Type {
	return d.fromGo(name, t, map[reflect.Type]*types.Type{})
}

func (d *DeclaredTypes) fromGo(name string, t reflect.Type, seen map[reflect.Type]*types.Type) *types.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return cel.DynType
	}
	switch t.Kind() {
	case reflect.String:
		return cel.StringType
	case reflect.Bool:
		return cel.BoolType
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return cel.IntType
	case reflect.Float32, reflect.Float64:
		return cel.DoubleType
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return cel.BytesType
		}
		return cel.ListType(d.fromGo(name+".@items", t.Elem(), seen))
	case reflect.Map:
		return cel.MapType(cel.StringType, d.fromGo(name+".@values", t.Elem(), seen))
	case reflect.Struct:
		if ot, ok := seen[t]; ok {
			return ot
		}
		ot := types.NewObjectType(name)
		seen[t] = ot
		fields := map[string]*types.Type{}
		d.structs[name] = fields
		d.goFields(name, t, fields, seen)
		return ot
	}
	return cel.DynType
}

func (d *DeclaredTypes) goFields(name string, t reflect.Type, fields map[string]*types.Type, seen map[reflect.Type]*types.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		jname, _, _ := strings.Cut(tag, ",")
		if jname == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && jname == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				d.goFields(name, ft, fields, seen)
				continue
			}
		}
		if jname == "" {
			jname = f.Name
		}
		fields[jname] = d.fromGo(name+"."+jname, f.Type, seen)
	}
}

// FromSchema declares the type of an OpenAPI v3 schema (a custom
// resource's) under name; metadata, when given, is the type of the root's
// metadata.
func (d *DeclaredTypes) FromSchema(name string, s map[string]any, metadata *types.Type) *types.Type {
	t := d.fromSchema(name, s)
	if fields, ok := d.structs[name]; ok {
		fields["apiVersion"], fields["kind"] = cel.StringType, cel.StringType
		if metadata != nil {
			fields["metadata"] = metadata
		}
	}
	return t
}

func (d *DeclaredTypes) fromSchema(name string, s map[string]any) *types.Type {
	if s == nil {
		return cel.DynType
	}
	if b, _ := s["x-kubernetes-int-or-string"].(bool); b {
		return cel.DynType
	}
	props, _ := s["properties"].(map[string]any)
	typ, _ := s["type"].(string)
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b && len(props) == 0 {
		return cel.DynType
	}
	switch typ {
	case "string":
		if f, _ := s["format"].(string); f != "" {
			return cel.DynType
		}
		return cel.StringType
	case "integer":
		return cel.IntType
	case "number":
		return cel.DoubleType
	case "boolean":
		return cel.BoolType
	case "array":
		items, _ := s["items"].(map[string]any)
		return cel.ListType(d.fromSchema(name+".@items", items))
	case "object", "":
		if ap, ok := s["additionalProperties"].(map[string]any); ok && len(props) == 0 {
			return cel.MapType(cel.StringType, d.fromSchema(name+".@values", ap))
		}
		if len(props) == 0 {
			return cel.DynType
		}
		fields := map[string]*types.Type{}
		d.structs[name] = fields
		for k, v := range props {
			ps, _ := v.(map[string]any)
			fields[k] = d.fromSchema(name+"."+k, ps)
		}
		if b, _ := s["x-kubernetes-embedded-resource"].(bool); b {
			fields["apiVersion"], fields["kind"], fields["metadata"] = cel.StringType, cel.StringType, cel.DynType
		}
		return types.NewObjectType(name)
	}
	return cel.DynType
}

// types.Provider, declaring the object types and delegating the rest.

func (d *DeclaredTypes) EnumValue(name string) ref.Val { return d.base.EnumValue(name) }

func (d *DeclaredTypes) FindIdent(name string) (ref.Val, bool) { return d.base.FindIdent(name) }

func (d *DeclaredTypes) FindStructType(name string) (*types.Type, bool) {
	if _, ok := d.structs[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return d.base.FindStructType(name)
}

func (d *DeclaredTypes) FindStructFieldNames(name string) ([]string, bool) {
	fields, ok := d.structs[name]
	if !ok {
		return d.base.FindStructFieldNames(name)
	}
	out := make([]string, 0, len(fields))
	for k := range fields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, true
}

func (d *DeclaredTypes) FindStructFieldType(name, fieldName string) (*types.FieldType, bool) {
	fields, ok := d.structs[name]
	if !ok {
		return d.base.FindStructFieldType(name, fieldName)
	}
	t, ok := fields[fieldName]
	if !ok {
		return nil, false
	}
	return &types.FieldType{Type: t}, true
}

func (d *DeclaredTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	return d.base.NewValue(name, fields)
}

// Warning is a type-checking problem of one expression.
type Warning struct {
	FieldRef, Warning string
}

// Typed is one set of declarations to check a policy against: a kind the
// policy matches.
type Typed struct {
	// Name of the kind, for messages (apps/v1, Kind=Deployment).
	Name  string
	Decls Decls
}

// TypeCheck checks src against each of kinds (a DynType object when kinds
// is empty) and returns one warning per expression that does not check, in
// field order; with several kinds, the message names each failing kind.
func TypeCheck(src Source, kinds []Typed) []Warning {
	if len(kinds) == 0 {
		kinds = []Typed{{}}
	}
	byField := map[string][]string{}
	var order []string
	for _, k := range kinds {
		env, err := cel.NewEnv(envOptions(k.Decls)...)
		if err != nil {
			continue
		}
		_, errs := compile(env, src, func(p *field.Path, _ string, err error) *field.Error {
			return &field.Error{Field: p.String(), Detail: err.Error()}
		})
		for _, e := range errs {
			if _, ok := byField[e.Field]; !ok {
				order = append(order, e.Field)
			}
			msg := strings.TrimPrefix(e.Detail, "compilation failed: ")
			if len(kinds) > 1 {
				msg = fmt.Sprintf("mismatch found for %s:\n%s", k.Name, msg)
			}
			byField[e.Field] = append(byField[e.Field], msg)
		}
	}
	out := make([]Warning, 0, len(order))
	for _, f := range order {
		out = append(out, Warning{FieldRef: f, Warning: strings.Join(byField[f], "\n")})
	}
	return out
}
