package schema

import (
	"github.com/converge-dev/converge/crd/api"
	fapi "github.com/converge-dev/converge/framework/api"
)

// Default applies the schema's defaults to obj in place. A default applies where
// the property is absent (or null and not nullable) and its parent object exists;
// defaults are applied inside arrays and maps too.
func Default(obj map[string]any, s *api.JSONSchemaProps) {
	if s == nil {
		return
	}
	defaultValue(obj, s)
}

func defaultValue(v any, s *api.JSONSchemaProps) {
	switch t := v.(type) {
	case map[string]any:
		for k, ps := range s.Properties {
			cur, ok := t[k]
			if (!ok || (cur == nil && !ps.Nullable)) && ps.Default != nil {
				if d, err := ps.Default.Value(); err == nil && d != nil {
					t[k] = fapi.DeepCopyJSONValue(d)
				}
			}
		}
		for k, e := range t {
			if ps, ok := s.Properties[k]; ok {
				defaultValue(e, &ps)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				defaultValue(e, s.AdditionalProperties.Schema)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range t {
				if e == nil && s.Items.Schema.Default != nil && !s.Items.Schema.Nullable {
					if d, err := s.Items.Schema.Default.Value(); err == nil && d != nil {
						t[i] = fapi.DeepCopyJSONValue(d)
						e = t[i]
					}
				}
				defaultValue(e, s.Items.Schema)
			}
		}
	}
}
