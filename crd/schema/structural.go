package schema

import (
	"slices"

	"github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api/field"
)

var validTypes = []string{"array", "boolean", "integer", "number", "object", "string"}

// ValidateStructural checks the structural-schema rules of a CRD version schema at
// p (".../openAPIV3Schema"): a type at every level (except where
// x-kubernetes-preserve-unknown-fields or x-kubernetes-int-or-string allow none),
// type object at the root, items for arrays, no additionalProperties beside
// properties, and only name/generateName under the root's metadata.
func ValidateStructural(s *api.JSONSchemaProps, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Type != "object" {
		if s.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), "must not be empty at the root"))
		} else {
			errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object at the root"))
		}
	}
	if md, ok := s.Properties["metadata"]; ok {
		mp := p.Child("properties").Key("metadata")
		if md.Type != "" && md.Type != "object" {
			errs = append(errs, field.Invalid(mp.Child("type"), md.Type, "must be object"))
		}
		for k := range md.Properties {
			if k != "name" && k != "generateName" {
				errs = append(errs, field.Forbidden(mp, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
				break
			}
		}
	}
	structural(s, p, false, &errs)
	return errs
}

func structural(s *api.JSONSchemaProps, p *field.Path, junctor bool, errs *field.ErrorList) {
	if s.Type != "" && !slices.Contains(validTypes, s.Type) {
		*errs = append(*errs, field.NotSupported(p.Child("type"), s.Type, validTypes))
	}
	if !junctor && s.Type == "" && !s.PreservesUnknown() && !s.XIntOrString {
		*errs = append(*errs, field.Required(p.Child("type"), "must not be empty for specified object fields"))
	}
	if s.XIntOrString && s.Type != "" {
		*errs = append(*errs, field.Invalid(p.Child("type"), s.Type, "must be empty if x-kubernetes-int-or-string is true"))
	}
	if len(s.Properties) > 0 && s.AdditionalProperties != nil {
		*errs = append(*errs, field.Forbidden(p.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
	}
	if s.Type == "array" && s.Items == nil && !junctor {
		*errs = append(*errs, field.Required(p.Child("items"), "must be specified"))
	}
	if s.Items != nil && len(s.Items.JSONSchemas) > 0 {
		*errs = append(*errs, field.Forbidden(p.Child("items"), "items must be a schema object and not an array"))
	}
	if s.XListType != nil {
		switch *s.XListType {
		case "atomic", "set":
		case "map":
			if len(s.XListMapKeys) == 0 {
				*errs = append(*errs, field.Required(p.Child("x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map"))
			}
		default:
			*errs = append(*errs, field.NotSupported(p.Child("x-kubernetes-list-type"), *s.XListType, []string{"atomic", "set", "map"}))
		}
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ps := s.Properties[k]
		structural(&ps, p.Child("properties").Key(k), junctor, errs)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		structural(s.AdditionalProperties.Schema, p.Child("additionalProperties"), junctor, errs)
	}
	if s.Items != nil && s.Items.Schema != nil {
		structural(s.Items.Schema, p.Child("items"), junctor, errs)
	}
	for i := range s.AllOf {
		structural(&s.AllOf[i], p.Child("allOf").Index(i), true, errs)
	}
	for i := range s.AnyOf {
		structural(&s.AnyOf[i], p.Child("anyOf").Index(i), true, errs)
	}
	for i := range s.OneOf {
		structural(&s.OneOf[i], p.Child("oneOf").Index(i), true, errs)
	}
	if s.Not != nil {
		structural(s.Not, p.Child("not"), true, errs)
	}
}
