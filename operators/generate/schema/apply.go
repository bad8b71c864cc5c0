package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/operators/generate/markers"
)

// priority orders markers as controller-gen does: those that set the type or
// the list type first, so that the checks of the others see it.
func priority(name string) int {
	switch strings.TrimPrefix(name, markers.ItemsPrefix) {
	case "kubebuilder:validation:Type", "kubebuilder:validation:XIntOrString", "listType", "k8s:listType", "default",
		"Type", "XIntOrString":
		return 9
	}
	return 10
}

// apply applies the schema markers of set to s (the items: ones to its
// items), recording an error with the marker's position for each that does
// not fit.
func (b *Builder) apply(s *crdapi.JSONSchemaProps, set markers.Set) {
	ordered := slices.Clone(set)
	slices.SortStableFunc(ordered, func(x, y markers.Marker) int { return priority(x.Name) - priority(y.Name) })
	var items []markers.Marker
	for _, m := range ordered {
		if strings.HasPrefix(m.Name, markers.ItemsPrefix) {
			items = append(items, m)
			continue
		}
		if err := applyOne(s, m.Name, m); err != nil {
			b.errorf(m.Pos, "+%s: %v", m.Name, err)
		}
	}
	for _, m := range items {
		if s.Type != "array" || s.Items == nil || s.Items.Schema == nil {
			b.errorf(m.Pos, "+%s: must apply to an array, found %q", m.Name, s.Type)
			continue
		}
		name := markers.ValidationPrefix + strings.TrimPrefix(m.Name, markers.ItemsPrefix)
		if err := applyOne(s.Items.Schema, name, m); err != nil {
			b.errorf(m.Pos, "+%s: %v", m.Name, err)
		}
	}
}

func numeric(s *crdapi.JSONSchemaProps) bool { return s.Type == "integer" || s.Type == "number" }
func textual(s *crdapi.JSONSchemaProps) bool { return s.Type == "string" || s.XIntOrString }

func integral(v float64) bool { return v == math.Trunc(v) && !math.IsNaN(v) && !math.IsInf(v, 0) }

func applyOne(s *crdapi.JSONSchemaProps, name string, m markers.Marker) error {
	v := m.Value
	switch strings.TrimPrefix(name, markers.ValidationPrefix) {
	case "Maximum", "Minimum", "MultipleOf":
		what := strings.ToLower(strings.TrimPrefix(name, markers.ValidationPrefix))
		if !numeric(s) {
			return fmt.Errorf("must apply %s to a numeric value, found %q", what, s.Type)
		}
		f := v.(float64)
		if s.Type == "integer" && !integral(f) {
			return fmt.Errorf("cannot apply non-integral %s (%v) to an integer value", what, f)
		}
		switch what {
		case "maximum":
			s.Maximum = &f
		case "minimum":
			s.Minimum = &f
		default:
			s.MultipleOf = &f
		}
	case "ExclusiveMaximum", "ExclusiveMinimum":
		if !numeric(s) {
			return fmt.Errorf("must apply to a numeric value, found %q", s.Type)
		}
		if strings.HasSuffix(name, "Maximum") {
			s.ExclusiveMaximum = v.(bool)
		} else {
			s.ExclusiveMinimum = v.(bool)
		}
	case "MaxLength", "MinLength":
		if !textual(s) {
			return fmt.Errorf("must apply to a textual value, found type %q", s.Type)
		}
		n := int64(v.(int))
		if strings.HasPrefix(name, markers.ValidationPrefix+"Max") {
			s.MaxLength = &n
		} else {
			s.MinLength = &n
		}
	case "Pattern":
		if !textual(s) {
			return fmt.Errorf("must apply pattern to a textual value, found type %q", s.Type)
		}
		s.Pattern = v.(string)
	case "MaxItems", "MinItems":
		if s.Type != "array" {
			return fmt.Errorf("must apply to an array, found %q", s.Type)
		}
		n := int64(v.(int))
		if strings.HasSuffix(name, "MaxItems") {
			s.MaxItems = &n
		} else {
			s.MinItems = &n
		}
	case "UniqueItems":
		if s.Type != "array" {
			return fmt.Errorf("must apply uniqueitems to an array, found %q", s.Type)
		}
		s.UniqueItems = v.(bool)
	case "MaxProperties", "MinProperties":
		if s.Type != "object" {
			return fmt.Errorf("must apply to an object, found %q", s.Type)
		}
		n := int64(v.(int))
		if strings.HasSuffix(name, "MaxProperties") {
			s.MaxProperties = &n
		} else {
			s.MinProperties = &n
		}
	case "Enum":
		vals := v.([]any)
		s.Enum = make([]crdapi.JSON, 0, len(vals))
		for _, e := range vals {
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			s.Enum = append(s.Enum, crdapi.JSON{Raw: raw})
		}
	case "Format":
		s.Format = v.(string)
	case "Type":
		s.Type = v.(string)
	case "XPreserveUnknownFields", "kubebuilder:pruning:PreserveUnknownFields":
		t := true
		s.XPreserveUnknownFields = &t
	case "XEmbeddedResource", "EmbeddedResource":
		s.XEmbeddedResource = true
	case "XIntOrString":
		s.XIntOrString = true
	case "XValidation":
		r := crdapi.ValidationRule{Rule: m.String("rule"), Message: m.String("message"),
			MessageExpression: m.String("messageExpression"), FieldPath: m.String("fieldPath")}
		if reason := m.String("reason"); reason != "" {
			switch reason {
			case "FieldValueRequired", "FieldValueInvalid", "FieldValueForbidden", "FieldValueDuplicate":
				r.Reason = &reason
			default:
				return fmt.Errorf("invalid reason %s, valid values are FieldValueRequired, FieldValueInvalid, FieldValueForbidden and FieldValueDuplicate", reason)
			}
		}
		if o, ok := m.Arg("optionalOldSelf").(bool); ok {
			r.OptionalOldSelf = &o
		}
		s.XValidations = append(s.XValidations, r)
	case "nullable":
		s.Nullable = true
	case "kubebuilder:default", "default":
		if v == nil && name == "default" {
			return nil
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if s.Type == "array" && string(raw) == "{}" {
			raw = []byte("[]")
		}
		s.Default = &crdapi.JSON{Raw: raw}
	case "kubebuilder:example":
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		s.Example = &crdapi.JSON{Raw: raw}
	case "kubebuilder:title":
		if v == nil {
			return nil
		}
		t, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected a string, got %T", v)
		}
		s.Title = t
	case "listType", "k8s:listType":
		if s.Type != "array" {
			return fmt.Errorf("must apply listType to an array, found %q", s.Type)
		}
		lt := v.(string)
		if lt != "map" && lt != "set" && lt != "atomic" {
			return fmt.Errorf(`listType must be "map", "set" or "atomic", not %q`, lt)
		}
		s.XListType = &lt
	case "listMapKey", "k8s:listMapKey":
		if s.Type != "array" {
			return fmt.Errorf("must apply listMapKey to an array, found %q", s.Type)
		}
		if s.XListType == nil || *s.XListType != "map" {
			return fmt.Errorf("must apply listMapKey to an associative list (+listType=map)")
		}
		s.XListMapKeys = append(s.XListMapKeys, v.(string))
	case "mapType":
		if s.Type != "object" {
			return fmt.Errorf("must apply mapType to an object, found %q", s.Type)
		}
		mt := v.(string)
		if mt != "atomic" && mt != "granular" {
			return fmt.Errorf(`mapType must be "granular" or "atomic", not %q`, mt)
		}
		s.XMapType = &mt
	case "structType":
		if s.Type != "object" && s.Type != "" {
			return fmt.Errorf("must apply structType to an object, found %q", s.Type)
		}
		st := v.(string)
		if st != "atomic" && st != "granular" {
			return fmt.Errorf(`structType must be "granular" or "atomic", not %q`, st)
		}
		s.XMapType = &st
	case "kubebuilder:externalDocs":
		u := m.String("url")
		if _, err := url.ParseRequestURI(u); err != nil {
			return fmt.Errorf("invalid url %q: %w", u, err)
		}
		s.ExternalDocs = &crdapi.ExternalDocumentation{URL: u, Description: m.String("description")}
	}
	return nil
}
