package schema

import (
	"fmt"
	"reflect"
	"slices"

	crdapi "github.com/converge-dev/converge/crd/api"
)

// merge folds src into dst the way controller-gen flattens an allOf (a
// field's own schema over its type's, an inline struct into its parent):
// unset values are taken, equal ones kept; properties merge recursively,
// required lists join (sorted, unique), x-kubernetes-validations of src come
// first, enum and descriptions of dst win, preserve-unknown-fields and
// map-type of src win; a type conflict is an error; any other conflict keeps
// both values in an allOf, as controller-gen does.
func merge(dst *crdapi.JSONSchemaProps, src crdapi.JSONSchemaProps) error {
	var err error
	for _, sub := range src.AllOf {
		if e := merge(dst, sub); e != nil && err == nil {
			err = e
		}
	}
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	typ := dv.Type()
	var dstRest, srcRest crdapi.JSONSchemaProps
	rv, ro := reflect.ValueOf(&dstRest).Elem(), reflect.ValueOf(&srcRest).Elem()
	hoisted := false
	for i := range sv.NumField() {
		name := typ.Field(i).Name
		switch name {
		case "AllOf", "Title", "Description", "Example", "ExternalDocs":
			continue
		case "Enum":
			if len(src.Enum) > 0 && len(dst.Enum) == 0 {
				dst.Enum = slices.Clone(src.Enum)
			}
			continue
		}
		sf, df := sv.Field(i), dv.Field(i)
		if sf.IsZero() {
			continue
		}
		if df.IsZero() {
			df.Set(sf)
			continue
		}
		if reflect.DeepEqual(sf.Interface(), df.Interface()) {
			continue
		}
		switch name {
		case "Properties":
			for k, v := range src.Properties {
				d, ok := dst.Properties[k]
				if !ok {
					dst.Properties[k] = v
					continue
				}
				if e := merge(&d, v); e != nil && err == nil {
					err = e
				}
				dst.Properties[k] = d
			}
		case "Required":
			dst.Required = append(dst.Required, src.Required...)
		case "Type":
			if err == nil {
				err = fmt.Errorf("conflicting types %s and %s", dst.Type, src.Type)
			}
		case "AdditionalProperties":
			if src.AdditionalProperties.Schema == nil {
				continue
			}
			if dst.AdditionalProperties.Schema == nil {
				dst.AdditionalProperties.Schema = &crdapi.JSONSchemaProps{}
			}
			if e := merge(dst.AdditionalProperties.Schema, *src.AdditionalProperties.Schema); e != nil && err == nil {
				err = e
			}
		case "XPreserveUnknownFields", "XMapType":
			df.Set(sf)
		case "XValidations":
			dst.XValidations = append(slices.Clone(src.XValidations), dst.XValidations...)
		default:
			ro.Field(i).Set(sf)
			rv.Field(i).Set(df)
			df.Set(reflect.Zero(df.Type()))
			hoisted = true
		}
	}
	if hoisted {
		dst.AllOf = append(dst.AllOf, dstRest, srcRest)
	}
	if len(dst.Required) > 0 {
		slices.Sort(dst.Required)
		dst.Required = slices.Compact(dst.Required)
	}
	return err
}
