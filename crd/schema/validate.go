package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Validator validates custom resources against one version's schema.
type Validator struct {
	props  *api.JSONSchemaProps
	raw    map[string]any
	schema *jsonschema.Schema
}

// NewValidator compiles s (an openAPIV3Schema) into a Validator.
func NewValidator(s *api.JSONSchemaProps) (*Validator, error) {
	raw := ToJSONSchema(s)
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("encode JSON schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft7
	c.AssertFormat = true
	c.Formats["int32"] = func(any) bool { return true }
	c.Formats["int64"] = func(any) bool { return true }
	c.Formats["float"] = func(any) bool { return true }
	c.Formats["double"] = func(any) bool { return true }
	c.Formats["password"] = func(any) bool { return true }
	c.Formats["duration"] = func(any) bool { return true }
	c.Formats["byte"] = func(v any) bool {
		s, ok := v.(string)
		if !ok {
			return true
		}
		_, err := base64.StdEncoding.DecodeString(s)
		return err == nil
	}
	const url = "converge://crd/schema.json"
	if err := c.AddResource(url, bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("add JSON schema: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile JSON schema: %w", err)
	}
	return &Validator{props: s, raw: raw, schema: sch}, nil
}

// ToJSONSchema converts an OpenAPI v3 (Kubernetes dialect) schema into a JSON
// Schema draft-07 document: nullable adds "null" to the type, int-or-string
// becomes ["integer","string"], boolean exclusive bounds become numeric ones, and
// Kubernetes extensions and defaults are dropped.
func ToJSONSchema(s *api.JSONSchemaProps) map[string]any {
	if s == nil {
		return map[string]any{}
	}
	out := map[string]any{}
	var types []string
	switch {
	case s.XIntOrString:
		types = []string{"integer", "string"}
	case s.Type != "":
		types = []string{s.Type}
	}
	if len(types) > 0 {
		if s.Nullable {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = types
		}
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if s.Maximum != nil {
		if s.ExclusiveMaximum {
			out["exclusiveMaximum"] = *s.Maximum
		} else {
			out["maximum"] = *s.Maximum
		}
	}
	if s.Minimum != nil {
		if s.ExclusiveMinimum {
			out["exclusiveMinimum"] = *s.Minimum
		} else {
			out["minimum"] = *s.Minimum
		}
	}
	setInt := func(k string, v *int64) {
		if v != nil {
			out[k] = *v
		}
	}
	setInt("maxLength", s.MaxLength)
	setInt("minLength", s.MinLength)
	setInt("maxItems", s.MaxItems)
	setInt("minItems", s.MinItems)
	setInt("maxProperties", s.MaxProperties)
	setInt("minProperties", s.MinProperties)
	if s.Pattern != "" {
		out["pattern"] = s.Pattern
	}
	if s.UniqueItems {
		out["uniqueItems"] = true
	}
	if s.MultipleOf != nil {
		out["multipleOf"] = *s.MultipleOf
	}
	if len(s.Enum) > 0 {
		vals := make([]any, 0, len(s.Enum)+1)
		for i := range s.Enum {
			if v, err := s.Enum[i].Value(); err == nil {
				vals = append(vals, v)
			}
		}
		if s.Nullable {
			vals = append(vals, nil)
		}
		out["enum"] = vals
	}
	if len(s.Required) > 0 {
		out["required"] = slices.Clone(s.Required)
	}
	if s.Items != nil {
		if s.Items.Schema != nil {
			out["items"] = ToJSONSchema(s.Items.Schema)
		} else if len(s.Items.JSONSchemas) > 0 {
			l := make([]any, len(s.Items.JSONSchemas))
			for i := range s.Items.JSONSchemas {
				l[i] = ToJSONSchema(&s.Items.JSONSchemas[i])
			}
			out["items"] = l
		}
	}
	list := func(k string, ss []api.JSONSchemaProps) {
		if len(ss) == 0 {
			return
		}
		l := make([]any, len(ss))
		for i := range ss {
			l[i] = ToJSONSchema(&ss[i])
		}
		out[k] = l
	}
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	if s.Not != nil {
		out["not"] = ToJSONSchema(s.Not)
	}
	if len(s.Properties) > 0 {
		props := make(map[string]any, len(s.Properties))
		for k, p := range s.Properties {
			props[k] = ToJSONSchema(&p)
		}
		out["properties"] = props
	}
	if s.AdditionalProperties != nil {
		if s.AdditionalProperties.Schema != nil {
			out["additionalProperties"] = ToJSONSchema(s.AdditionalProperties.Schema)
		} else {
			out["additionalProperties"] = s.AdditionalProperties.Allows
		}
	}
	if len(s.PatternProperties) > 0 {
		props := make(map[string]any, len(s.PatternProperties))
		for k, p := range s.PatternProperties {
			props[k] = ToJSONSchema(&p)
		}
		out["patternProperties"] = props
	}
	return out
}

// Validate checks obj against the schema and returns Kubernetes field errors with
// kube-openapi's messages.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	err := v.schema.Validate(obj)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var errs field.ErrorList
	v.collect(obj, ve, &errs)
	// Deduplicate (a keyword may be reported through several branches).
	seen := map[string]bool{}
	out := errs[:0]
	for _, e := range errs {
		k := e.Error()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return out
}

func (v *Validator) collect(obj map[string]any, ve *jsonschema.ValidationError, errs *field.ErrorList) {
	kw := lastToken(ve.KeywordLocation)
	if len(ve.Causes) > 0 && kw != "anyOf" && kw != "oneOf" {
		for _, c := range ve.Causes {
			v.collect(obj, c, errs)
		}
		return
	}
	node := v.schemaAt(ve.KeywordLocation)
	path, value := instanceAt(obj, ve.InstanceLocation)
	ps := path.String()
	if path == nil {
		ps = "body"
	}
	switch kw {
	case "type":
		want := node["type"]
		var wantS string
		switch t := want.(type) {
		case string:
			wantS = t
		case []any:
			parts := make([]string, 0, len(t))
			for _, e := range t {
				if s, ok := e.(string); ok && s != "null" {
					parts = append(parts, s)
				}
			}
			wantS = strings.Join(parts, ",")
		}
		got := TypeName(value)
		*errs = append(*errs, field.TypeInvalid(path, got, fmt.Sprintf("%s in body must be of type %s: %q", ps, wantS, got)))
	case "required":
		m, _ := value.(map[string]any)
		req, _ := node["required"].([]string)
		for _, name := range req {
			if _, ok := m[name]; !ok {
				*errs = append(*errs, field.Required(child(path, name), ""))
			}
		}
	case "enum":
		vals, _ := node["enum"].([]any)
		strs := make([]string, 0, len(vals))
		for _, e := range vals {
			if e == nil {
				continue
			}
			strs = append(strs, fmt.Sprintf("%v", e))
		}
		*errs = append(*errs, field.NotSupported(path, value, strs))
	case "maxLength":
		*errs = append(*errs, field.TooLong(path, value, int(num(node["maxLength"]))))
	case "maxItems":
		l, _ := value.([]any)
		*errs = append(*errs, field.TooMany(path, len(l), int(num(node["maxItems"]))))
	case "maxProperties":
		m, _ := value.(map[string]any)
		*errs = append(*errs, field.TooMany(path, len(m), int(num(node["maxProperties"]))))
	case "maximum":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should be less than or equal to %v", ps, fmtNum(node["maximum"]))))
	case "exclusiveMaximum":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should be less than %v", ps, fmtNum(node["exclusiveMaximum"]))))
	case "minimum":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should be greater than or equal to %v", ps, fmtNum(node["minimum"]))))
	case "exclusiveMinimum":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should be greater than %v", ps, fmtNum(node["exclusiveMinimum"]))))
	case "pattern":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should match '%s'", ps, node["pattern"])))
	case "minLength":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should be at least %d chars long", ps, int64(num(node["minLength"])))))
	case "minItems":
		l, _ := value.([]any)
		*errs = append(*errs, field.Invalid(path, len(l), fmt.Sprintf("%s in body should have at least %d items", ps, int64(num(node["minItems"])))))
	case "minProperties":
		m, _ := value.(map[string]any)
		*errs = append(*errs, field.Invalid(path, len(m), fmt.Sprintf("%s in body should have at least %d properties", ps, int64(num(node["minProperties"])))))
	case "uniqueItems":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body shouldn't contain duplicates", ps)))
	case "multipleOf":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body should be a multiple of %v", ps, fmtNum(node["multipleOf"]))))
	case "format":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body must be of type %s: %q", ps, node["format"], fmt.Sprint(value))))
	case "anyOf":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body must validate at least one schema (anyOf)", ps)))
	case "oneOf":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body must validate one and only one schema (oneOf)", ps)))
	case "not":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body must not validate the schema (not)", ps)))
	case "additionalProperties", "false":
		*errs = append(*errs, field.Invalid(path, value, fmt.Sprintf("%s in body is a forbidden property", ps)))
	default:
		*errs = append(*errs, field.Invalid(path, value, ve.Message))
	}
}

// TypeName is the OpenAPI type name of a JSON value.
func TypeName(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, int32, int64:
		return "integer"
	case float64:
		if t == math.Trunc(t) && !math.IsInf(t, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func num(v any) float64 {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case float64:
		return t
	case int:
		return float64(t)
	}
	return 0
}

func fmtNum(v any) string {
	f := num(v)
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func tokens(ptr string) []string {
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return nil
	}
	parts := strings.Split(ptr, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts
}

func lastToken(ptr string) string {
	t := tokens(ptr)
	if len(t) == 0 {
		return ""
	}
	return t[len(t)-1]
}

// schemaAt returns the converted schema node holding the keyword at loc.
func (v *Validator) schemaAt(loc string) map[string]any {
	t := tokens(loc)
	if len(t) > 0 {
		t = t[:len(t)-1]
	}
	var cur any = v.raw
	for _, tok := range t {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

// instanceAt resolves a JSON pointer into obj and returns the field path and value.
func instanceAt(obj map[string]any, loc string) (*field.Path, any) {
	var p *field.Path
	var cur any = obj
	for _, tok := range tokens(loc) {
		switch c := cur.(type) {
		case map[string]any:
			p = child(p, tok)
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			p = p.Index(i)
			if i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		default:
			p = child(p, tok)
			cur = nil
		}
	}
	return p, cur
}
