package crd

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/crd/cel"
	"github.com/converge-dev/converge/crd/schema"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// GroupVersion of CustomResourceDefinitions.
func GroupVersion() api.GroupVersion {
	return api.GroupVersion{Group: crdapi.Group, Version: crdapi.Version}
}

// GroupVersionResource of CustomResourceDefinitions.
func GroupVersionResource() api.GroupVersionResource {
	return GroupVersion().WithResource("customresourcedefinitions")
}

// Resource returns the registry entry of customresourcedefinitions.
func Resource() *registry.Resource {
	return &registry.Resource{
		GroupVersion: GroupVersion(), Resource: "customresourcedefinitions",
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList",
		Singular: "customresourcedefinition", ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"}, Strategy: Strategy{},
		StatusSubresource: true, Generation: true,
		// Type drives protobuf request bodies (clients send CRDs as
		// application/vnd.kubernetes.protobuf) and strategic merge patch.
		Type: reflect.TypeFor[crdapi.CustomResourceDefinition](),
		Printer: &registry.Printer{
			Columns: []registry.Column{
				{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
				{Name: "Created At", Type: "date", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
			},
			Row: func(obj map[string]any, _ time.Time) ([]any, error) {
				return []any{api.NestedString(obj, "metadata", "name"), api.NestedString(obj, "metadata", "creationTimestamp")}, nil
			},
		},
	}
}

// Strategy is the write strategy of CustomResourceDefinitions.
type Strategy struct{}

var (
	_ registry.Strategy = Strategy{}
	_ registry.Preparer = Strategy{}
)

// Canonicalize decodes spec and status through the Go types (dropping unknown
// fields, which are reported) and applies Kubernetes' defaults.
func (Strategy) Canonicalize(obj map[string]any) (map[string]any, []string, field.ErrorList) {
	unknown := registry.UnknownFields(obj, reflect.TypeFor[crdapi.CustomResourceDefinition]())
	for _, part := range []string{"spec", "status"} {
		v, ok := obj[part]
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, nil, field.ErrorList{field.InternalError(field.NewPath(part), err)}
		}
		var out any
		switch part {
		case "spec":
			var s crdapi.CustomResourceDefinitionSpec
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, unknown, field.ErrorList{field.Invalid(field.NewPath(part), "", err.Error())}
			}
			defaultSpec(&s)
			out = s
		case "status":
			var s crdapi.CustomResourceDefinitionStatus
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, unknown, field.ErrorList{field.Invalid(field.NewPath(part), "", err.Error())}
			}
			out = s
		}
		m, err := toMap(out)
		if err != nil {
			return nil, nil, field.ErrorList{field.InternalError(field.NewPath(part), err)}
		}
		obj[part] = m
	}
	return obj, unknown, nil
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return api.DecodeMap(b)
}

func defaultSpec(s *crdapi.CustomResourceDefinitionSpec) {
	if s.Names.Singular == "" {
		s.Names.Singular = strings.ToLower(s.Names.Kind)
	}
	if s.Names.ListKind == "" && s.Names.Kind != "" {
		s.Names.ListKind = s.Names.Kind + "List"
	}
	if s.Conversion == nil {
		s.Conversion = &crdapi.CustomResourceConversion{Strategy: "None"}
	}
}

// PrepareForCreate adds the cleanup finalizer and initialises status.
func (Strategy) PrepareForCreate(obj map[string]any) {
	meta := metaOf(obj)
	fins, _ := meta["finalizers"].([]any)
	if !slices.Contains(fins, any(crdapi.CleanupFinalizer)) {
		meta["finalizers"] = append(fins, crdapi.CleanupFinalizer)
	}
	status := map[string]any{"acceptedNames": map[string]any{"plural": "", "kind": ""}, "storedVersions": []any{}}
	if sv := storageVersion(obj); sv != "" {
		status["storedVersions"] = []any{sv}
	}
	obj["status"] = status
}

// PrepareForUpdate records a new storage version in status.storedVersions.
func (Strategy) PrepareForUpdate(obj, _ map[string]any) {
	sv := storageVersion(obj)
	if sv == "" {
		return
	}
	st, _ := obj["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		obj["status"] = st
	}
	stored, _ := st["storedVersions"].([]any)
	if !slices.Contains(stored, any(sv)) {
		st["storedVersions"] = append(stored, sv)
	}
}

func metaOf(obj map[string]any) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func storageVersion(obj map[string]any) string {
	for _, v := range api.NestedSlice(obj, "spec", "versions") {
		vm, _ := v.(map[string]any)
		if b, _ := vm["storage"].(bool); b {
			s, _ := vm["name"].(string)
			return s
		}
	}
	return ""
}

// ValidateCreate implements registry.Strategy.
func (Strategy) ValidateCreate(_ context.Context, obj map[string]any) field.ErrorList {
	c, err := crdapi.FromMap(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, "", err.Error())}
	}
	return Validate(c)
}

// ValidateUpdate implements registry.Strategy: the create rules plus immutable
// group and scope.
func (Strategy) ValidateUpdate(_ context.Context, obj, old map[string]any) field.ErrorList {
	c, err := crdapi.FromMap(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, "", err.Error())}
	}
	errs := Validate(c)
	o, err := crdapi.FromMap(old)
	if err != nil {
		return errs
	}
	if c.Spec.Group != o.Spec.Group {
		errs = append(errs, field.Invalid(field.NewPath("spec", "group"), c.Spec.Group, "field is immutable"))
	}
	if c.Spec.Scope != o.Spec.Scope {
		errs = append(errs, field.Invalid(field.NewPath("spec", "scope"), c.Spec.Scope, "field is immutable"))
	}
	return errs
}

var printerColumnTypes = []string{"integer", "number", "string", "boolean", "date"}

// Validate checks a CRD like Kubernetes' ValidateCustomResourceDefinition (the
// subset Converge enforces).
func Validate(c *crdapi.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := c.Spec
	if want := s.Names.Plural + "." + s.Group; c.Metadata.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Metadata.Name, `must be spec.names.plural+"."+spec.group`))
	}
	switch {
	case s.Group == "":
		errs = append(errs, field.Required(spec.Child("group"), ""))
	case len(validation.IsDNS1123Subdomain(s.Group)) > 0:
		errs = append(errs, field.Invalid(spec.Child("group"), s.Group, strings.Join(validation.IsDNS1123Subdomain(s.Group), ",")))
	case len(strings.Split(s.Group, ".")) < 2:
		errs = append(errs, field.Invalid(spec.Child("group"), s.Group, "should be a domain with at least one dot"))
	}
	switch s.Scope {
	case "":
		errs = append(errs, field.Required(spec.Child("scope"), ""))
	case "Cluster", "Namespaced":
	default:
		errs = append(errs, field.NotSupported(spec.Child("scope"), s.Scope, []string{"Cluster", "Namespaced"}))
	}
	errs = append(errs, validateNames(&s.Names, spec.Child("names"))...)
	if s.PreserveUnknownFields {
		errs = append(errs, field.Invalid(spec.Child("preserveUnknownFields"), true, "must be false in order to use defaults in the schema"))
	}
	vp := spec.Child("versions")
	if len(s.Versions) == 0 {
		errs = append(errs, field.Required(vp, "must have exactly one version marked as storage version"))
	}
	storage, served := 0, 0
	seen := map[string]bool{}
	for i, v := range s.Versions {
		p := vp.Index(i)
		if v.Storage {
			storage++
		}
		if v.Served {
			served++
		}
		if seen[v.Name] {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, "must appear only once"))
		}
		seen[v.Name] = true
		if v.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if m := validation.IsDNS1035Label(v.Name); len(m) > 0 {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, strings.Join(m, ",")))
		}
		errs = append(errs, validateVersion(&v, p)...)
	}
	if len(s.Versions) > 0 && storage != 1 {
		errs = append(errs, field.Invalid(vp, versionNames(s.Versions), "must have exactly one version marked as storage version"))
	}
	if len(s.Versions) > 0 && served == 0 {
		errs = append(errs, field.Invalid(vp, versionNames(s.Versions), "must have at least one version marked as served"))
	}
	if conv := s.Conversion; conv != nil {
		cp := spec.Child("conversion")
		switch conv.Strategy {
		case "None":
			if conv.Webhook != nil {
				errs = append(errs, field.Forbidden(cp.Child("webhook"), "should not be set when strategy is not set to Webhook"))
			}
		case "Webhook":
			if conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
				errs = append(errs, field.Required(cp.Child("webhook", "clientConfig"), "required when strategy is set to Webhook"))
			}
		default:
			errs = append(errs, field.NotSupported(cp.Child("strategy"), conv.Strategy, []string{"None", "Webhook"}))
		}
	}
	return errs
}

func versionNames(vs []crdapi.CustomResourceDefinitionVersion) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return "[" + strings.Join(names, " ") + "]"
}

func validateNames(n *crdapi.CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(fp *field.Path, v string, required bool) {
		if v == "" {
			if required {
				errs = append(errs, field.Required(fp, ""))
			}
			return
		}
		if m := validation.IsDNS1035Label(v); len(m) > 0 {
			errs = append(errs, field.Invalid(fp, v, strings.Join(m, ",")))
		}
	}
	label(p.Child("plural"), n.Plural, true)
	label(p.Child("singular"), n.Singular, false)
	kind := func(fp *field.Path, v string) {
		if v == "" {
			errs = append(errs, field.Required(fp, ""))
			return
		}
		if m := validation.IsDNS1035Label(strings.ToLower(v)); len(m) > 0 {
			errs = append(errs, field.Invalid(fp, v, "may have mixed case, but should otherwise match: "+strings.Join(m, ",")))
		}
	}
	kind(p.Child("kind"), n.Kind)
	kind(p.Child("listKind"), n.ListKind)
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, sn := range n.ShortNames {
		label(p.Child("shortNames").Index(i), sn, true)
	}
	for i, c := range n.Categories {
		label(p.Child("categories").Index(i), c, true)
	}
	return errs
}

func validateVersion(v *crdapi.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		errs = append(errs, field.Required(p.Child("schema", "openAPIV3Schema"), "schemas are required"))
	} else {
		sp := p.Child("schema", "openAPIV3Schema")
		errs = append(errs, schema.ValidateStructural(v.Schema.OpenAPIV3Schema, sp)...)
		if len(errs) == 0 {
			if _, err := schema.NewValidator(v.Schema.OpenAPIV3Schema); err != nil {
				errs = append(errs, field.Invalid(sp, "", err.Error()))
			}
			if _, err := cel.Compile(v.Schema.OpenAPIV3Schema); err != nil {
				errs = append(errs, field.Invalid(sp.Child("x-kubernetes-validations"), "", err.Error()))
			}
		}
	}
	if sr := v.Subresources; sr != nil && sr.Scale != nil {
		sc := p.Child("subresources", "scale")
		if !strings.HasPrefix(sr.Scale.SpecReplicasPath, ".spec.") {
			errs = append(errs, field.Invalid(sc.Child("specReplicasPath"), sr.Scale.SpecReplicasPath, "should be a json path under .spec"))
		}
		if !strings.HasPrefix(sr.Scale.StatusReplicasPath, ".status.") {
			errs = append(errs, field.Invalid(sc.Child("statusReplicasPath"), sr.Scale.StatusReplicasPath, "should be a json path under .status"))
		}
		if lp := sr.Scale.LabelSelectorPath; lp != nil && !strings.HasPrefix(*lp, ".spec.") && !strings.HasPrefix(*lp, ".status.") {
			errs = append(errs, field.Invalid(sc.Child("labelSelectorPath"), *lp, "should be a json path under either .spec or .status"))
		}
	}
	for i, col := range v.AdditionalPrinterColumns {
		cp := p.Child("additionalPrinterColumns").Index(i)
		if col.Name == "" {
			errs = append(errs, field.Required(cp.Child("name"), ""))
		}
		if !slices.Contains(printerColumnTypes, col.Type) {
			errs = append(errs, field.NotSupported(cp.Child("type"), col.Type, printerColumnTypes))
		}
		if col.JSONPath == "" {
			errs = append(errs, field.Required(cp.Child("jsonPath"), ""))
		} else if _, err := ParseJSONPath(col.JSONPath); err != nil {
			errs = append(errs, field.Invalid(cp.Child("jsonPath"), col.JSONPath, err.Error()))
		}
	}
	return errs
}
