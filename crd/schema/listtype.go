package schema

import (
	"encoding/json"

	"github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// ValidateListTypes checks x-kubernetes-list-type set (no duplicate items) and map
// (no two items with the same key fields) everywhere in obj.
func ValidateListTypes(obj map[string]any, s *api.JSONSchemaProps) field.ErrorList {
	var errs field.ErrorList
	listTypes(obj, s, nil, &errs)
	return errs
}

func listTypes(v any, s *api.JSONSchemaProps, p *field.Path, errs *field.ErrorList) {
	if s == nil {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if ps, ok := s.Properties[k]; ok {
				listTypes(e, &ps, child(p, k), errs)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				listTypes(e, s.AdditionalProperties.Schema, child(p, k), errs)
			}
		}
	case []any:
		if s.XListType != nil {
			switch *s.XListType {
			case "set":
				seen := map[string]bool{}
				for i, e := range t {
					b, _ := json.Marshal(e)
					if seen[string(b)] {
						*errs = append(*errs, field.Duplicate(p.Index(i), e))
					}
					seen[string(b)] = true
				}
			case "map":
				seen := map[string]bool{}
				for i, e := range t {
					m, ok := e.(map[string]any)
					if !ok {
						continue
					}
					key := map[string]any{}
					for _, k := range s.XListMapKeys {
						if kv, ok := m[k]; ok {
							key[k] = kv
						}
					}
					b, _ := json.Marshal(key)
					if seen[string(b)] {
						*errs = append(*errs, field.Duplicate(p.Index(i), key))
					}
					seen[string(b)] = true
				}
			}
		}
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range t {
				listTypes(e, s.Items.Schema, p.Index(i), errs)
			}
		}
	}
}
