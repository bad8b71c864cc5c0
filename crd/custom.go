package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/crd/cel"
	"github.com/converge-dev/converge/crd/schema"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// notCheckedMessage is appended when blocking errors prevented CEL evaluation.
const notCheckedMessage = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// CustomResources builds one registry entry per served version of c. All share
// the storage prefix /registry/<group>/<plural>/; objects are stored in the CRD's
// storage version and converted to the version of each request (by rewriting
// apiVersion, or by the conversion webhook when spec.conversion.strategy is
// Webhook; its client connects with dial).
func CustomResources(c *crdapi.CustomResourceDefinition, dial Dialer) ([]*registry.Resource, error) {
	var out []*registry.Resource
	for i := range c.Spec.Versions {
		v := &c.Spec.Versions[i]
		if !v.Served {
			continue
		}
		r, err := customResource(c, v, dial)
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func customResource(c *crdapi.CustomResourceDefinition, v *crdapi.CustomResourceDefinitionVersion, dial Dialer) (*registry.Resource, error) {
	n := c.Spec.Names
	st, err := NewCustomStrategy(v)
	if err != nil {
		return nil, err
	}
	r := &registry.Resource{
		GroupVersion: api.GroupVersion{Group: c.Spec.Group, Version: v.Name},
		Resource:     n.Plural, Kind: n.Kind, ListKind: n.ListKind, Singular: n.Singular,
		ShortNames: n.ShortNames, Categories: n.Categories,
		Namespaced: c.Spec.Scope == "Namespaced",
		Strategy:   st, Generation: true, RequireResourceVersion: true,
		StorageVersion: c.StorageVersion(),
	}
	r.Convert, r.ConvertList = converters(c, dial)
	if r.ListKind == "" {
		r.ListKind = n.Kind + "List"
	}
	if r.Singular == "" {
		r.Singular = strings.ToLower(n.Kind)
	}
	if sr := v.Subresources; sr != nil {
		r.StatusSubresource = sr.Status != nil
		if sc := sr.Scale; sc != nil {
			r.Scale = &registry.Scale{
				SpecReplicasPath:   splitPath(sc.SpecReplicasPath),
				StatusReplicasPath: splitPath(sc.StatusReplicasPath),
			}
			if sc.LabelSelectorPath != nil {
				r.Scale.LabelSelectorPath = splitPath(*sc.LabelSelectorPath)
			}
		}
	}
	if v.Deprecated {
		if v.DeprecationWarning != nil {
			r.DeprecationWarning = *v.DeprecationWarning
		} else {
			r.DeprecationWarning = fmt.Sprintf("%s/%s %s is deprecated", c.Spec.Group, v.Name, n.Kind)
		}
	}
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		b, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err == nil {
			r.Schema, _ = api.DecodeMap(b)
		}
		if s := v.Schema.OpenAPIV3Schema; hasDefaults(s) {
			// Objects stored before a default was added are served with
			// it, as Kubernetes defaults what it reads from storage.
			r.ReadDefaults = func(obj map[string]any) { schema.Default(obj, s) }
			r.ReadDefaultsKey = fmt.Sprintf("%s/%d", c.Metadata.UID, c.Metadata.Generation)
		}
	}
	p, err := NewPrinter(v.AdditionalPrinterColumns)
	if err != nil {
		return nil, err
	}
	r.Printer = p
	if len(v.SelectableFields) > 0 {
		type sel struct {
			key  string
			path *JSONPath
		}
		var sels []sel
		for _, sf := range v.SelectableFields {
			jp, err := ParseJSONPath(sf.JSONPath)
			if err != nil {
				return nil, fmt.Errorf("selectable field %s: %w", sf.JSONPath, err)
			}
			sels = append(sels, sel{key: strings.TrimPrefix(sf.JSONPath, "."), path: jp})
		}
		r.SelectableFields = func(obj map[string]any) map[string]string {
			out := make(map[string]string, len(sels))
			for _, s := range sels {
				if vals := s.path.Find(obj); len(vals) > 0 && vals[0] != nil {
					out[s.key] = fmt.Sprint(vals[0])
				} else {
					out[s.key] = ""
				}
			}
			return out
		}
	}
	return r, nil
}

// convertNone converts a custom resource between versions the way the None
// conversion strategy does: only apiVersion changes. The Webhook strategy calls
// the CRD's conversion webhook (conversion.go).
func convertNone(obj map[string]any, to api.GroupVersion) (map[string]any, error) {
	obj["apiVersion"] = to.String()
	return obj, nil
}

// convertNoneList is convertNone for several objects (registry.Resource.ConvertList).
func convertNoneList(objs []map[string]any, to api.GroupVersion) ([]map[string]any, error) {
	for _, o := range objs {
		o["apiVersion"] = to.String()
	}
	return objs, nil
}

func splitPath(p string) []string {
	p = strings.TrimPrefix(p, ".")
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// CustomStrategy is the write strategy of one version of a custom resource:
// pruning, defaulting, OpenAPI validation, list types and CEL rules.
type CustomStrategy struct {
	schema    *crdapi.JSONSchemaProps
	validator *schema.Validator
	cel       *cel.Validator
	openAPI   map[string]any // schema as JSON, for field management
}

var _ registry.Strategy = (*CustomStrategy)(nil)

// NewCustomStrategy compiles the schema of v.
func NewCustomStrategy(v *crdapi.CustomResourceDefinitionVersion) (*CustomStrategy, error) {
	s := &CustomStrategy{}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return s, nil
	}
	s.schema = v.Schema.OpenAPIV3Schema
	if b, err := json.Marshal(s.schema); err == nil {
		s.openAPI, _ = api.DecodeMap(b)
	}
	val, err := schema.NewValidator(s.schema)
	if err != nil {
		return nil, err
	}
	s.validator = val
	cv, err := cel.Compile(s.schema)
	if err != nil {
		return nil, err
	}
	s.cel = cv
	return s, nil
}

// OpenAPISchema returns the version's structural schema as JSON: the API
// server derives server-side apply's merge rules from it.
func (s *CustomStrategy) OpenAPISchema() map[string]any { return s.openAPI }

// Canonicalize prunes unknown fields (returned for fieldValidation) and applies
// defaults. Metadata keeps only ObjectMeta's fields, matched case-sensitively, as
// in Kubernetes: a "namE" is an unknown field, not the name.
func (s *CustomStrategy) Canonicalize(obj map[string]any) (map[string]any, []string, field.ErrorList) {
	var unknown []string
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for _, u := range registry.PruneUnknown(meta, reflect.TypeFor[api.ObjectMeta]()) {
			unknown = append(unknown, "metadata."+u)
		}
	}
	if s.schema == nil {
		return obj, unknown, nil
	}
	unknown = append(unknown, schema.Prune(obj, s.schema)...)
	schema.Default(obj, s.schema)
	return obj, unknown, nil
}

// ValidateCreate implements registry.Strategy.
func (s *CustomStrategy) ValidateCreate(ctx context.Context, obj map[string]any) field.ErrorList {
	return s.validate(ctx, obj, nil)
}

// ValidateUpdate implements registry.Strategy; transition rules see old.
func (s *CustomStrategy) ValidateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	return s.validate(ctx, obj, old)
}

func (s *CustomStrategy) validate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if s.validator == nil {
		return nil
	}
	errs := s.validator.Validate(obj)
	errs = append(errs, schema.ValidateListTypes(obj, s.schema)...)
	if s.cel == nil {
		return errs
	}
	if hasBlocking(errs) {
		return append(errs, field.Invalid(nil, "null", notCheckedMessage))
	}
	return append(errs, s.cel.Validate(ctx, obj, old)...)
}

func hasBlocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeRequired, field.ErrorTypeNotSupported, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// NewPrinter renders NAME, the additional printer columns (or AGE when there are
// none), evaluating each column's JSONPath.
func NewPrinter(cols []crdapi.CustomResourceColumnDefinition) (*registry.Printer, error) {
	if len(cols) == 0 {
		cols = []crdapi.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	}
	columns := []registry.Column{{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"}}
	paths := make([]*JSONPath, len(cols))
	for i, c := range cols {
		jp, err := ParseJSONPath(c.JSONPath)
		if err != nil {
			return nil, fmt.Errorf("printer column %s: %w", c.Name, err)
		}
		paths[i] = jp
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		columns = append(columns, registry.Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: desc, Priority: c.Priority})
	}
	return &registry.Printer{Columns: columns, Row: func(obj map[string]any, now time.Time) ([]any, error) {
		cells := make([]any, 0, len(cols)+1)
		cells = append(cells, api.NestedString(obj, "metadata", "name"))
		for i, c := range cols {
			cells = append(cells, cell(c.Type, paths[i].Find(obj), now))
		}
		return cells, nil
	}}, nil
}

func cell(typ string, vals []any, now time.Time) any {
	if len(vals) == 0 || vals[0] == nil {
		return nil
	}
	if len(vals) > 1 {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		return strings.Join(parts, ",")
	}
	v := vals[0]
	switch typ {
	case "date":
		s, ok := v.(string)
		if !ok {
			return nil
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil
		}
		return registry.Age(api.NewTime(t), now)
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
		return nil
	case "number":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return n
		}
		return nil
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		return nil
	case "string":
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return v
}

// hasDefaults reports whether s or a schema below it has a default.
func hasDefaults(s *crdapi.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if s.Default != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(&p) {
			return true
		}
	}
	if it := s.Items; it != nil {
		if hasDefaults(it.Schema) {
			return true
		}
		for i := range it.JSONSchemas {
			if hasDefaults(&it.JSONSchemas[i]) {
				return true
			}
		}
	}
	if ap := s.AdditionalProperties; ap != nil && hasDefaults(ap.Schema) {
		return true
	}
	return false
}
