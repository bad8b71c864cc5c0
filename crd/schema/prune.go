package schema

import (
	"github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Prune removes the fields of obj that the schema does not declare and returns
// their paths ("spec.foo", "spec.items[0].bar"). The root's apiVersion, kind and
// metadata are kept, as are those of x-kubernetes-embedded-resource objects;
// subtrees under x-kubernetes-preserve-unknown-fields keep unknown fields.
func Prune(obj map[string]any, s *api.JSONSchemaProps) []string {
	if s == nil {
		return nil
	}
	var out []string
	pruneObject(obj, s, nil, true, &out)
	return out
}

func pruneValue(v any, s *api.JSONSchemaProps, p *field.Path, out *[]string) {
	if s == nil {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		pruneObject(t, s, p, s.XEmbeddedResource, out)
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range t {
				pruneValue(e, s.Items.Schema, p.Index(i), out)
			}
		} else if !s.PreservesUnknown() && s.Items == nil && s.Type == "array" {
			return
		}
	}
}

func child(p *field.Path, k string) *field.Path {
	if p == nil {
		return field.NewPath(k)
	}
	return p.Child(k)
}

func pruneObject(m map[string]any, s *api.JSONSchemaProps, p *field.Path, keepTypeMeta bool, out *[]string) {
	preserve := s.PreservesUnknown()
	var addl *api.JSONSchemaProps
	if s.AdditionalProperties != nil {
		addl = s.AdditionalProperties.Schema
		if addl == nil && s.AdditionalProperties.Allows {
			preserve = true
		}
	}
	for k, v := range m {
		if keepTypeMeta && (k == "apiVersion" || k == "kind" || k == "metadata") {
			continue
		}
		if ps, ok := s.Properties[k]; ok {
			pruneValue(v, &ps, child(p, k), out)
			continue
		}
		if addl != nil {
			pruneValue(v, addl, child(p, k), out)
			continue
		}
		if preserve {
			continue
		}
		delete(m, k)
		*out = append(*out, child(p, k).String())
	}
}
