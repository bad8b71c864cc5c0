package openapigen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/crd"
	"github.com/converge-dev/converge/framework/api"
)

const (
	module       = "github.com/converge-dev/converge/"
	frameworkAPI = module + "framework/api"
	builtinAPI   = module + "builtin/api/"
	crdAPI       = module + "crd/api"
	metaV1       = "io.k8s.apimachinery.pkg.apis.meta.v1."
)

// Kind is a kind to publish: its group/version/kind and Go type.
type Kind struct {
	GVK  api.GroupVersionKind
	Type reflect.Type
}

// Kinds returns every built-in kind and list kind (the built-in scheme's)
// and CustomResourceDefinition.
func Kinds() ([]Kind, error) {
	s, err := all.NewScheme()
	if err != nil {
		return nil, fmt.Errorf("building the built-in scheme: %w", err)
	}
	var out []Kind
	for _, gvk := range s.KnownKinds() {
		obj, err := s.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("new %s: %w", gvk, err)
		}
		out = append(out, Kind{GVK: gvk, Type: reflect.TypeOf(obj).Elem()})
		lgvk := gvk.GroupVersion().WithKind(gvk.Kind + "List")
		if l, err := s.NewList(lgvk); err == nil {
			out = append(out, Kind{GVK: lgvk, Type: reflect.TypeOf(l).Elem()})
		}
	}
	r := crd.Resource()
	out = append(out, Kind{GVK: r.GroupVersion.WithKind(r.Kind), Type: r.Type})
	return out, nil
}

// Generate returns the definitions of kinds and every type they refer to,
// as JSON (one definition a line, sorted by name). root is the module's
// directory, where the doc comments are read.
func Generate(root string, kinds []Kind) ([]byte, error) {
	g := &generator{root: root, defs: map[string]map[string]any{}, names: map[string]reflect.Type{},
		docs: map[string]map[string]string{}}
	for _, k := range kinds {
		name := g.define(k.Type)
		def := g.defs[name]
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		gvks = append(gvks, map[string]any{"group": k.GVK.Group, "version": k.GVK.Version, "kind": k.GVK.Kind})
		slices.SortFunc(gvks, func(a, b any) int {
			am, bm := a.(map[string]any), b.(map[string]any)
			return strings.Compare(fmt.Sprint(am["group"], "/", am["version"], "/", am["kind"]), fmt.Sprint(bm["group"], "/", bm["version"], "/", bm["kind"]))
		})
		def["x-kubernetes-group-version-kind"] = gvks
	}
	if g.err != nil {
		return nil, g.err
	}
	names := make([]string, 0, len(g.defs))
	for n := range g.defs {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, n := range names {
		b, err := json.Marshal(g.defs[n])
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", n, err)
		}
		k, _ := json.Marshal(n)
		buf.Write(k)
		buf.WriteString(": ")
		buf.Write(b)
		if i < len(names)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

type generator struct {
	root  string
	defs  map[string]map[string]any
	names map[string]reflect.Type
	// docs are the doc comments of a package's types ("T") and fields
	// ("T.F"), by package path.
	docs map[string]map[string]string
	err  error
}

// DefinitionName is the name Kubernetes gives the definition of Go type t.
func DefinitionName(t reflect.Type) (string, error) {
	pkg, name := t.PkgPath(), t.Name()
	switch {
	case pkg == frameworkAPI:
		switch name {
		case "IntOrString":
			return "io.k8s.apimachinery.pkg.util.intstr.IntOrString", nil
		case "Quantity":
			return "io.k8s.apimachinery.pkg.api.resource.Quantity", nil
		case "RawExtension":
			return "io.k8s.apimachinery.pkg.runtime.RawExtension", nil
		}
		return metaV1 + name, nil
	case pkg == crdAPI:
		return "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1." + name, nil
	case strings.HasPrefix(pkg, builtinAPI):
		gv := strings.Split(strings.TrimPrefix(pkg, builtinAPI), "/")
		if len(gv) != 2 {
			return "", fmt.Errorf("package %s is not builtin/api/<group>/<version>", pkg)
		}
		switch gv[0] {
		case "apiregistration":
			return "io.k8s.kube-aggregator.pkg.apis.apiregistration." + gv[1] + "." + name, nil
		case "metrics":
			return "io.k8s.metrics.pkg.apis.metrics." + gv[1] + "." + name, nil
		}
		return "io.k8s.api." + gv[0] + "." + gv[1] + "." + name, nil
	}
	return "", fmt.Errorf("no Kubernetes definition name for %s.%s", pkg, name)
}

func (g *generator) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// define makes sure named struct type t has a definition and returns its
// name.
func (g *generator) define(t reflect.Type) string {
	name, err := DefinitionName(t)
	if err != nil {
		g.fail(err)
		return ""
	}
	if prev, ok := g.names[name]; ok {
		if prev != t {
			g.fail(fmt.Errorf("%s and %s are both %s", prev, t, name))
		}
		return name
	}
	g.names[name] = t
	def := map[string]any{}
	g.defs[name] = def
	for k, v := range g.definition(t) {
		def[k] = v
	}
	if d := g.typeDoc(t); d != "" {
		def["description"] = d
	}
	return name
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// metaDescription is the description of a field of these types that has
// no doc comment of its own (every kind's metadata).
var metaDescription = map[reflect.Type]string{
	reflect.TypeFor[api.ObjectMeta](): "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
	reflect.TypeFor[api.ListMeta]():   "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
}

// definition is the schema of named struct type t.
func (g *generator) definition(t reflect.Type) map[string]any {
	if t.PkgPath() == frameworkAPI {
		switch t.Name() {
		case "Time", "MicroTime":
			return map[string]any{"type": "string", "format": "date-time"}
		case "Quantity":
			return map[string]any{"type": "string", "oneOf": oneOf("string", "number")}
		case "IntOrString":
			return map[string]any{"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": true,
				"oneOf": oneOf("integer", "string")}
		case "RawExtension":
			return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		case "FieldsV1":
			return map[string]any{"type": "object"}
		}
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		// Whatever its marshaler writes.
		return map[string]any{}
	}
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	s := map[string]any{"type": "object"}
	if len(props) > 0 {
		s["properties"] = props
	}
	if len(required) > 0 {
		slices.Sort(required)
		s["required"] = slices.Compact(required)
	}
	return s
}

// fields adds the properties (and required ones) of struct t, inlined
// embedded structs included.
func (g *generator) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		opts := strings.Split(tag, ",")
		name := opts[0]
		inline := slices.Contains(opts[1:], "inline") || (f.Anonymous && name == "")
		if inline {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(ft, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		raw := g.fieldDoc(t, f.Name)
		optional := slices.Contains(opts[1:], "omitempty") || slices.Contains(opts[1:], "omitzero")
		switch {
		case hasMarker(raw, "optional"):
			optional = true
		case hasMarker(raw, "required"):
			optional = false
		}
		if !optional {
			*required = append(*required, name)
		}
		p := g.schema(f.Type)
		if d := description(raw); d != "" {
			p["description"] = d
		} else if d := metaDescription[f.Type]; d != "" {
			p["description"] = d
		} else if d := kindFieldDescription(t, name); d != "" {
			p["description"] = d
		}
		for tagName, ext := range map[string]string{
			"listType": "x-kubernetes-list-type", "mapType": "x-kubernetes-map-type", "structType": "x-kubernetes-map-type",
			"patchStrategy": "x-kubernetes-patch-strategy", "patchMergeKey": "x-kubernetes-patch-merge-key",
		} {
			if v := f.Tag.Get(tagName); v != "" {
				p[ext] = v
			}
		}
		if v := f.Tag.Get("listMapKeys"); v != "" {
			var keys []any
			for _, k := range strings.Split(v, ",") {
				keys = append(keys, k)
			}
			p["x-kubernetes-list-map-keys"] = keys
		}
		props[name] = p
	}
}

// oneOf is the v3 form of a value of one of types (the API server keeps
// "type" for v2 and "oneOf" for v3, as kube-openapi publishes them).
func oneOf(types ...string) []any {
	var out []any
	for _, t := range types {
		out = append(out, map[string]any{"type": t})
	}
	return out
}

// kindFieldDescription is the description of a kind's spec or status
// field that has no doc comment of its own.
func kindFieldDescription(t reflect.Type, name string) string {
	f, ok := t.FieldByName("TypeMeta")
	if !ok || !f.Anonymous || f.Type != reflect.TypeFor[api.TypeMeta]() {
		return ""
	}
	switch name {
	case "spec":
		return "Spec is the desired state of the " + t.Name() + "."
	case "status":
		return "Status is the most recently observed state of the " + t.Name() + ", written by the system. Read-only."
	}
	return ""
}

// schema is the schema of a property or an item of type t.
func (g *generator) schema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == frameworkAPI && t.Name() == "Duration" {
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.Name() == "" {
			g.fail(fmt.Errorf("anonymous struct type %s", t))
			return map[string]any{}
		}
		return map[string]any{"$ref": g.define(t)}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int32, reflect.Uint32, reflect.Int16, reflect.Uint16, reflect.Int8, reflect.Uint8:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32:
		return map[string]any{"type": "number", "format": "float"}
	case reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}
	}
	g.fail(fmt.Errorf("unsupported type %s", t))
	return map[string]any{}
}

// hasMarker says whether a doc comment has the line +name.
func hasMarker(doc, name string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if strings.TrimSpace(l) == "+"+name {
			return true
		}
	}
	return false
}

// description is a doc comment as kube-openapi writes it: marker lines
// (+…) dropped, the lines of a paragraph joined with spaces, paragraphs
// separated by a blank line.
func description(doc string) string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			flush()
		case strings.HasPrefix(l, "+"):
		default:
			cur = append(cur, l)
		}
	}
	flush()
	return strings.Join(paras, "\n\n")
}

func (g *generator) typeDoc(t reflect.Type) string {
	return description(g.pkgDocs(t.PkgPath())[t.Name()])
}

func (g *generator) fieldDoc(t reflect.Type, field string) string {
	return g.pkgDocs(t.PkgPath())[t.Name()+"."+field]
}

// pkgDocs reads the doc comments of a package of this module.
func (g *generator) pkgDocs(pkg string) map[string]string {
	if d, ok := g.docs[pkg]; ok {
		return d
	}
	d := map[string]string{}
	g.docs[pkg] = d
	if !strings.HasPrefix(pkg, module) {
		return d
	}
	dir := filepath.Join(g.root, strings.TrimPrefix(pkg, module))
	entries, err := os.ReadDir(dir)
	if err != nil {
		g.fail(fmt.Errorf("reading the doc comments of %s: %w", pkg, err))
		return d
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			g.fail(fmt.Errorf("parsing %s: %w", n, err))
			return d
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				d[ts.Name.Name] = doc.Text()
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					fd := fld.Doc
					if fd == nil {
						fd = fld.Comment
					}
					for _, id := range fld.Names {
						d[ts.Name.Name+"."+id.Name] = fd.Text()
					}
					if len(fld.Names) == 0 {
						d[ts.Name.Name+"."+embeddedName(fld.Type)] = fd.Text()
					}
				}
			}
		}
	}
	return d
}

func embeddedName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
