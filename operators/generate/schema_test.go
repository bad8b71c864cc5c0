package generate

import (
	"encoding/json"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/converge-dev/converge/operators/generate/schema"
)

// fieldCase is one field (with its comments) of a type Case<i>, the schema
// expected for it (JSON), or an error expected while building it (a regular
// expression, matched after "<file>:<line>: ").
type fieldCase struct {
	name    string
	field   string
	extra   string // more declarations (unique names per case)
	want    string
	wantErr string
	errLine int // line of the error in the case's file (counted from the field's first line = 1)
}

var fieldCases = []fieldCase{
	// Types and json tags.
	{name: "string", field: "F string `json:\"f\"`", want: `{"type":"string"}`},
	{name: "int32", field: "F int32 `json:\"f\"`", want: `{"type":"integer","format":"int32"}`},
	{name: "int64", field: "F int64 `json:\"f\"`", want: `{"type":"integer","format":"int64"}`},
	{name: "int", field: "F int `json:\"f\"`", want: `{"type":"integer"}`},
	{name: "bool", field: "F bool `json:\"f\"`", want: `{"type":"boolean"}`},
	{name: "bytes", field: "F []byte `json:\"f\"`", want: `{"type":"string","format":"byte"}`},
	{name: "slice", field: "F []string `json:\"f\"`", want: `{"type":"array","items":{"type":"string"}}`},
	{name: "map", field: "F map[string]int32 `json:\"f\"`", want: `{"type":"object","additionalProperties":{"type":"integer","format":"int32"}}`},
	{name: "pointer", field: "F *int64 `json:\"f\"`", want: `{"type":"integer","format":"int64"}`},
	{name: "doc comment", field: "// F is a field.\n//\n// Second paragraph.\n// TODO: not this.\nF string `json:\"f\"`",
		want: `{"type":"string","description":"F is a field.\n\nSecond paragraph."}`},
	{name: "doc cut at ---", field: "// F is a field.\n// ---\n// Hidden.\nF string `json:\"f\"`",
		want: `{"type":"string","description":"F is a field."}`},
	{name: "named struct: type doc", field: "F Inner1 `json:\"f\"`",
		extra: "// Inner1 is inner.\ntype Inner1 struct {\n\tA string `json:\"a,omitempty\"`\n}",
		want:  `{"type":"object","description":"Inner1 is inner.","properties":{"a":{"type":"string"}}}`},
	{name: "named struct: field doc wins", field: "// F overrides.\nF Inner2 `json:\"f\"`",
		extra: "// Inner2 is inner.\ntype Inner2 struct {\n\tA string `json:\"a\"`\n}",
		want:  `{"type":"object","description":"F overrides.","properties":{"a":{"type":"string"}},"required":["a"]}`},
	{name: "items of a named type keep its doc", field: "F []Inner3 `json:\"f\"`",
		extra: "// Inner3 is an item.\ntype Inner3 struct {\n\tA string `json:\"a,omitempty\"`\n}",
		want:  `{"type":"array","items":{"type":"object","description":"Inner3 is an item.","properties":{"a":{"type":"string"}}}}`},
	{name: "inline and embedded", field: "Inner4 `json:\",inline\"`\nInner5 `json:\",omitempty\"`",
		extra: "// Inner4 is inlined.\ntype Inner4 struct {\n\tA string `json:\"a\"`\n}\n// Inner5 too.\ntype Inner5 struct {\n\tB string `json:\"b,omitempty\"`\n}",
		want:  `-inline`},
	{name: "json -", field: "F string `json:\"-\"`", want: `-absent`},

	// Required and optional.
	{name: "required without omitempty", field: "F string `json:\"f\"`", want: `-required`},
	{name: "omitempty is optional", field: "F string `json:\"f,omitempty\"`", want: `-optional`},
	{name: "omitzero is optional", field: "F string `json:\"f,omitzero\"`", want: `-optional`},
	{name: "+optional", field: "// +optional\nF string `json:\"f\"`", want: `-optional`},
	{name: "+kubebuilder:validation:Optional", field: "// +kubebuilder:validation:Optional\nF string `json:\"f\"`", want: `-optional`},
	{name: "+required", field: "// +required\nF string `json:\"f,omitempty\"`", want: `-required`},
	{name: "+kubebuilder:validation:Required", field: "// +kubebuilder:validation:Required\nF string `json:\"f,omitempty\"`", want: `-required`},
	{name: "marker block above the doc", field: "// +optional\n\n// F doc.\nF string `json:\"f\"`", want: `-optional`},

	// Validation markers.
	{name: "Minimum Maximum", field: "// +kubebuilder:validation:Minimum=-5\n// +kubebuilder:validation:Maximum=10\nF int32 `json:\"f\"`",
		want: `{"type":"integer","format":"int32","minimum":-5,"maximum":10}`},
	{name: "Exclusive bounds", field: "// +kubebuilder:validation:Minimum=0\n// +kubebuilder:validation:ExclusiveMinimum=true\n// +kubebuilder:validation:Maximum=1\n// +kubebuilder:validation:ExclusiveMaximum=true\nF int64 `json:\"f\"`",
		want: `{"type":"integer","format":"int64","minimum":0,"exclusiveMinimum":true,"maximum":1,"exclusiveMaximum":true}`},
	{name: "MultipleOf", field: "// +kubebuilder:validation:MultipleOf=5\nF int32 `json:\"f\"`", want: `{"type":"integer","format":"int32","multipleOf":5}`},
	{name: "Pattern raw string", field: "// +kubebuilder:validation:Pattern=`^[a-z]+,[0-9]$`\nF string `json:\"f\"`", want: `{"type":"string","pattern":"^[a-z]+,[0-9]$"}`},
	{name: "Pattern quoted", field: "// +kubebuilder:validation:Pattern=\"^a\\\\.b$\"\nF string `json:\"f\"`", want: `{"type":"string","pattern":"^a\\.b$"}`},
	{name: "Pattern bare", field: "// +kubebuilder:validation:Pattern=^[a-z]+$\nF string `json:\"f\"`", want: `{"type":"string","pattern":"^[a-z]+$"}`},
	{name: "Enum strings", field: "// +kubebuilder:validation:Enum=a;b;\"c d\"\nF string `json:\"f\"`", want: `{"type":"string","enum":["a","b","c d"]}`},
	{name: "Enum ints", field: "// +kubebuilder:validation:Enum=1;2;3\nF int32 `json:\"f\"`", want: `{"type":"integer","format":"int32","enum":[1,2,3]}`},
	{name: "Enum on the type", field: "F Color1 `json:\"f\"`",
		extra: "// Color1 is a color.\n// +kubebuilder:validation:Enum=red;green\ntype Color1 string",
		want:  `{"type":"string","description":"Color1 is a color.","enum":["red","green"]}`},
	{name: "MinLength MaxLength", field: "// +kubebuilder:validation:MinLength=1\n// +kubebuilder:validation:MaxLength=3\nF string `json:\"f\"`", want: `{"type":"string","minLength":1,"maxLength":3}`},
	{name: "MinItems MaxItems UniqueItems", field: "// +kubebuilder:validation:MinItems=1\n// +kubebuilder:validation:MaxItems=3\n// +kubebuilder:validation:UniqueItems=true\nF []int32 `json:\"f\"`",
		want: `{"type":"array","items":{"type":"integer","format":"int32"},"minItems":1,"maxItems":3,"uniqueItems":true}`},
	{name: "items: markers", field: "// +kubebuilder:validation:items:Pattern=`^x`\n// +kubebuilder:validation:items:MaxLength=4\nF []string `json:\"f\"`",
		want: `{"type":"array","items":{"type":"string","pattern":"^x","maxLength":4}}`},
	{name: "MinProperties MaxProperties", field: "// +kubebuilder:validation:MinProperties=1\n// +kubebuilder:validation:MaxProperties=2\nF map[string]string `json:\"f\"`",
		want: `{"type":"object","additionalProperties":{"type":"string"},"minProperties":1,"maxProperties":2}`},
	{name: "Format", field: "// +kubebuilder:validation:Format=uuid\nF string `json:\"f\"`", want: `{"type":"string","format":"uuid"}`},
	{name: "Type", field: "// +kubebuilder:validation:Type=string\n// +kubebuilder:validation:Pattern=`^[0-9]+$`\nF int64 `json:\"f\"`",
		want: `{"type":"string","format":"int64","pattern":"^[0-9]+$"}`},
	{name: "XValidation", field: "// +kubebuilder:validation:XValidation:rule=\"self > 0\",message=\"must be positive\",reason=FieldValueInvalid,fieldPath=\".f\"\n// +kubebuilder:validation:XValidation:rule=\"self < 9\",messageExpression=\"'too big: ' + string(self)\",optionalOldSelf=true\nF int32 `json:\"f\"`",
		want: `{"type":"integer","format":"int32","x-kubernetes-validations":[{"rule":"self > 0","message":"must be positive","reason":"FieldValueInvalid","fieldPath":".f"},{"rule":"self < 9","messageExpression":"'too big: ' + string(self)","optionalOldSelf":true}]}`},
	{name: "XValidation on a type", field: "F Pair1 `json:\"f\"`",
		extra: "// +kubebuilder:validation:XValidation:rule=\"self.a <= self.b\",message=\"a <= b\"\ntype Pair1 struct {\n\tA int32 `json:\"a\"`\n\tB int32 `json:\"b\"`\n}",
		want:  `{"type":"object","properties":{"a":{"type":"integer","format":"int32"},"b":{"type":"integer","format":"int32"}},"required":["a","b"],"x-kubernetes-validations":[{"rule":"self.a <= self.b","message":"a <= b"}]}`},
	{name: "XPreserveUnknownFields", field: "// +kubebuilder:validation:XPreserveUnknownFields\nF map[string]string `json:\"f\"`",
		want: `{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-preserve-unknown-fields":true}`},
	{name: "pruning:PreserveUnknownFields", field: "// +kubebuilder:pruning:PreserveUnknownFields\nF Obj1 `json:\"f\"`",
		extra: "type Obj1 struct{}", want: `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`},
	{name: "Schemaless", field: "// Anything.\n// +kubebuilder:validation:Schemaless\n// +kubebuilder:pruning:PreserveUnknownFields\nF Obj2 `json:\"f\"`",
		extra: "type Obj2 struct{ A string `json:\"a\"` }", want: `{"description":"Anything.","x-kubernetes-preserve-unknown-fields":true}`},
	{name: "EmbeddedResource", field: "// +kubebuilder:validation:EmbeddedResource\n// +kubebuilder:pruning:PreserveUnknownFields\nF runtime.RawExtension `json:\"f\"`",
		want: `{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}`},
	{name: "XEmbeddedResource", field: "// +kubebuilder:validation:XEmbeddedResource\nF Obj3 `json:\"f\"`",
		extra: "type Obj3 struct{}", want: `{"type":"object","x-kubernetes-embedded-resource":true}`},
	{name: "XIntOrString", field: "// +kubebuilder:validation:XIntOrString\n// +kubebuilder:validation:Pattern=`^[0-9]+%?$`\nF *intstr.IntOrString `json:\"f\"`",
		want: `{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true,"pattern":"^[0-9]+%?$"}`},
	{name: "nullable", field: "// +nullable\nF *string `json:\"f\"`", want: `{"type":"string","nullable":true}`},

	// Defaults.
	{name: "default int", field: "// +kubebuilder:default=3\nF int32 `json:\"f\"`", want: `{"type":"integer","format":"int32","default":3}`},
	{name: "default string", field: "// +kubebuilder:default=abc\nF string `json:\"f\"`", want: `{"type":"string","default":"abc"}`},
	{name: "default bool", field: "// +kubebuilder:default=false\nF bool `json:\"f\"`", want: `{"type":"boolean","default":false}`},
	{name: "default list", field: "// +kubebuilder:default={a,b}\nF []string `json:\"f\"`", want: `{"type":"array","items":{"type":"string"},"default":["a","b"]}`},
	{name: "default list by ;", field: "// +kubebuilder:default=a;b\nF []string `json:\"f\"`", want: `{"type":"array","items":{"type":"string"},"default":["a","b"]}`},
	{name: "default empty list", field: "// +kubebuilder:default={}\nF []string `json:\"f\"`", want: `{"type":"array","items":{"type":"string"},"default":[]}`},
	{name: "default map", field: "// +kubebuilder:default={x: 1, \"y\": \"z\"}\nF map[string]string `json:\"f\"`",
		want: `{"type":"object","additionalProperties":{"type":"string"},"default":{"x":1,"y":"z"}}`},
	{name: "+default JSON", field: "// +default={\"a\":[1,2]}\nF Obj4 `json:\"f\"`", extra: "type Obj4 struct{}",
		want: `{"type":"object","default":{"a":[1,2]}}`},
	{name: "+default wins over nothing, kubebuilder:default over +default", field: "// +default=1\n// +kubebuilder:default=2\nF int32 `json:\"f\"`",
		want: `{"type":"integer","format":"int32","default":2}`},

	// Topology.
	{name: "listType map", field: "// +listType=map\n// +listMapKey=name\nF []Item1 `json:\"f\"`",
		extra: "type Item1 struct {\n\tName string `json:\"name\"`\n}",
		want:  `{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"]}`},
	{name: "listType set", field: "// +listType=set\nF []string `json:\"f\"`", want: `{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}`},
	{name: "listType atomic on the type", field: "F List1 `json:\"f\"`", extra: "// +listType=atomic\ntype List1 []string",
		want: `{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"atomic"}`},
	{name: "mapType", field: "// +mapType=atomic\nF map[string]string `json:\"f\"`",
		want: `{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-map-type":"atomic"}`},
	{name: "structType", field: "// +structType=atomic\nF Obj5 `json:\"f\"`", extra: "type Obj5 struct{}",
		want: `{"type":"object","x-kubernetes-map-type":"atomic"}`},

	// Known types.
	{name: "ObjectMeta", field: "F metav1.ObjectMeta `json:\"f\"`", want: `{"type":"object"}`},
	{name: "Time", field: "F metav1.Time `json:\"f\"`", want: `{"type":"string","format":"date-time"}`},
	{name: "Duration", field: "F metav1.Duration `json:\"f\"`", want: `{"type":"string"}`},
	{name: "Quantity", field: "F resource.Quantity `json:\"f\"`",
		want: `{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true,"pattern":"` + strings.ReplaceAll(schema.QuantityPattern, `\`, `\\`) + `"}`},
	{name: "IntOrString", field: "F intstr.IntOrString `json:\"f\"`", want: `{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}`},
	{name: "RawExtension", field: "F runtime.RawExtension `json:\"f\"`", want: `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`},
	{name: "Condition from source with its markers", field: "F metav1.Condition `json:\"f\"`",
		want: `{"type":"object","description":"Condition is a status condition.","properties":{` +
			`"type":{"type":"string","description":"type of condition.","maxLength":316},` +
			`"status":{"type":"string","description":"status of the condition.","enum":["True","False","Unknown"]},` +
			`"lastTransitionTime":{"type":"string","format":"date-time","description":"lastTransitionTime is when it changed."}},` +
			`"required":["lastTransitionTime","status","type"]}`},
	{name: "MarshalJSON with a Type marker", field: "F Custom1 `json:\"f\"`",
		extra: "// +kubebuilder:validation:Type=string\n// +kubebuilder:validation:Format=ipv4\ntype Custom1 struct{ ip [4]byte }\n\nfunc (Custom1) MarshalJSON() ([]byte, error) { return nil, nil }",
		want:  `{"type":"string","format":"ipv4"}`},
	{name: "MarshalText is a string", field: "F Custom2 `json:\"f\"`",
		extra: "type Custom2 struct{ v int }\n\nfunc (Custom2) MarshalText() ([]byte, error) { return nil, nil }",
		want:  `{"type":"string"}`},
	{name: "Pattern on a Duration field (deliberate: controller-gen rejects it)", field: "// +kubebuilder:validation:Pattern=`^[0-9]+s$`\nF metav1.Duration `json:\"f\"`",
		want: `{"type":"string","pattern":"^[0-9]+s$"}`},

	// Errors name the file and line.
	{name: "err: Minimum on a string", field: "// +kubebuilder:validation:Minimum=1\nF string `json:\"f\"`", errLine: 1, wantErr: `must apply minimum to a numeric value`},
	{name: "err: non-integral bound", field: "// +kubebuilder:validation:Maximum=1.5\nF int32 `json:\"f\"`", errLine: 1, wantErr: `non-integral maximum`},
	{name: "err: MaxLength on an int", field: "// doc\n// +kubebuilder:validation:MaxLength=1\nF int32 `json:\"f\"`", errLine: 2, wantErr: `must apply to a textual value`},
	{name: "err: MaxItems on a string", field: "// +kubebuilder:validation:MaxItems=1\nF string `json:\"f\"`", errLine: 1, wantErr: `must apply to an array`},
	{name: "err: listMapKey without listType=map", field: "// +listMapKey=name\nF []string `json:\"f\"`", errLine: 1, wantErr: `associative list`},
	{name: "err: bad listType", field: "// +listType=bag\nF []string `json:\"f\"`", errLine: 1, wantErr: `listType must be`},
	{name: "err: bad reason", field: "// +kubebuilder:validation:XValidation:rule=\"true\",reason=Nope\nF string `json:\"f\"`", errLine: 1, wantErr: `invalid reason Nope`},
	{name: "err: XValidation without rule", field: "// +kubebuilder:validation:XValidation:message=\"m\"\nF string `json:\"f\"`", errLine: 1, wantErr: `missing argument "rule"`},
	{name: "err: unknown argument", field: "// +kubebuilder:validation:XValidation:rule=\"true\",msg=\"m\"\nF string `json:\"f\"`", errLine: 1, wantErr: `unknown argument "msg"`},
	{name: "err: not a number", field: "// +kubebuilder:validation:Minimum=one\nF int32 `json:\"f\"`", errLine: 1, wantErr: `expected a number`},
	{name: "err: unterminated string", field: "// +kubebuilder:validation:Pattern=\"abc\nF string `json:\"f\"`", errLine: 1, wantErr: `unterminated string`},
	{name: "err: no json tag", field: "F string", errLine: 1, wantErr: `has no json tag`},
	{name: "err: float", field: "F float64 `json:\"f\"`", errLine: 1, wantErr: `float fields are not allowed`},
	{name: "err: interface", field: "F any `json:\"f\"`", errLine: 1, wantErr: `interface type is not supported`},
	{name: "err: anonymous struct", field: "F struct{ A string } `json:\"f\"`", errLine: 1, wantErr: `inline struct types are not supported`},
	{name: "err: type conflict", field: "// +kubebuilder:validation:Type=integer\nF Color2 `json:\"f\"`", extra: "type Color2 string", errLine: 2, wantErr: `conflicting types`},
}

// loadCases writes every case into a module (next to a stand-in for
// apimachinery) and loads it once.
func loadCases(t *testing.T) (*sources, *types.Package, string) {
	t.Helper()
	dir := t.TempDir()
	fake, err := filepath.Abs("testdata/fakek8s")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module cases\n\ngo 1.26\n\nrequire k8s.io/apimachinery v0.0.0\n\nreplace k8s.io/apimachinery => "+fake+"\n")
	write("v1/doc.go", "// +groupName=cases.example.com\npackage v1\n")
	const header = "package v1\n\nimport (\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\t\"k8s.io/apimachinery/pkg/api/resource\"\n" +
		"\t\"k8s.io/apimachinery/pkg/runtime\"\n\t\"k8s.io/apimachinery/pkg/util/intstr\"\n)\n\n" +
		"var _ = metav1.Time{}\nvar _ = resource.Quantity{}\nvar _ = runtime.RawExtension{}\nvar _ = intstr.IntOrString{}\n\n"
	for i, c := range fieldCases {
		write(fmt.Sprintf("v1/case%02d.go", i), fmt.Sprintf("%stype Case%02d struct {\n%s\n}\n\n%s\n", header, i, c.field, c.extra))
	}
	pkgs, err := packages.Load(&packages.Config{Dir: dir, Env: append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off"),
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports},
		"./v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("load cases: %v", pkgs[0].Errors)
	}
	return newSources(pkgs[0].Fset), pkgs[0].Types, dir
}

func TestFieldMarkers(t *testing.T) {
	t.Parallel()
	src, pkg, dir := loadCases(t)
	headerLines := 15 // lines before the field in each case file
	for i, c := range fieldCases {
		t.Run(c.name, func(t *testing.T) {
			b := &schema.Builder{Decl: src.decl}
			obj := pkg.Scope().Lookup(fmt.Sprintf("Case%02d", i)).(*types.TypeName)
			s := b.Named(obj)
			file := filepath.Join(dir, "v1", fmt.Sprintf("case%02d.go", i))
			var errs []string
			for _, e := range append(src.errs, b.Err()) {
				if e == nil {
					continue
				}
				for _, line := range strings.Split(e.Error(), "\n") {
					if strings.HasPrefix(line, file+":") {
						errs = append(errs, line)
					}
				}
			}
			if c.wantErr != "" {
				re := regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf("%s:%d:", file, headerLines+c.errLine)) + ".*" + c.wantErr)
				for _, e := range errs {
					if re.MatchString(e) {
						return
					}
				}
				t.Fatalf("want an error matching %s, got %q", re, errs)
			}
			if len(errs) > 0 {
				t.Fatalf("errors: %q", errs)
			}
			checkCase(t, c, s)
		})
	}
}

func checkCase(t *testing.T, c fieldCase, s any) {
	t.Helper()
	var got map[string]any
	raw, _ := json.Marshal(s)
	_ = json.Unmarshal(raw, &got)
	props, _ := got["properties"].(map[string]any)
	var req []string
	if r, ok := got["required"].([]any); ok {
		for _, x := range r {
			req = append(req, x.(string))
		}
	}
	switch c.want {
	case "-required", "-optional":
		if has := contains(req, "f"); has != (c.want == "-required") {
			t.Fatalf("required = %v, want f %s", req, c.want[1:])
		}
		return
	case "-absent":
		if len(props) != 0 {
			t.Fatalf("properties = %v, want none", props)
		}
		return
	case "-inline":
		if _, ok := props["a"]; !ok || props["b"] == nil || len(props) != 2 || !reflect.DeepEqual(req, []string{"a"}) {
			t.Fatalf("inline fields: properties %v required %v", props, req)
		}
		return
	}
	var want any
	if err := json.Unmarshal([]byte(c.want), &want); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(props["f"], want) {
		gotF, _ := json.Marshal(props["f"])
		t.Fatalf("schema of f\n got: %s\nwant: %s", gotF, c.want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
