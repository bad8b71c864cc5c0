package apiserver

import (
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// OpenAPI v2 definitions of the resources that have a schema (custom
// resources), as kube-apiserver publishes them: the version's structural
// schema made v2-compatible (no allOf/oneOf/anyOf/not; a nullable or
// unknown-fields-preserving node loses its type, properties and items; an
// array without items loses its type), with apiVersion, kind and metadata
// added at the root and in every x-kubernetes-embedded-resource, and the
// kind's x-kubernetes-group-version-kind. A kind that preserves unknown
// fields at its root is published as a bare object, as kubectl would
// otherwise reject the fields its schema does not name.

// objectMetaRef is the definition every kind's metadata refers to.
const objectMetaRef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

const (
	descAPIVersion = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	descKind       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
	descMetadata   = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

// openAPIV2Definitions returns the definitions of list's resources that have
// a schema, and ObjectMeta (which they refer to) when there is any.
func openAPIV2Definitions(list []*registry.Resource) map[string]any {
	defs := map[string]any{}
	for _, res := range list {
		if res.Schema == nil {
			continue
		}
		gvk := []any{map[string]any{"group": res.GroupVersion.Group, "version": res.GroupVersion.Version, "kind": res.Kind}}
		defs[schemaName(res)] = kindDefinitionV2(res.Schema, gvk)
	}
	if len(defs) > 0 {
		defs[objectMetaRef] = objectMetaDefinition()
	}
	return defs
}

// kindDefinitionV2 is the definition of a kind with the v3 schema s.
func kindDefinitionV2(s map[string]any, gvk []any) map[string]any {
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b {
		return map[string]any{"type": "object", "x-kubernetes-group-version-kind": gvk}
	}
	def := api.DeepCopyJSON(s)
	toV2(def)
	addTypeAndObjectMeta(def)
	addEmbeddedMeta(def)
	def["x-kubernetes-group-version-kind"] = gvk
	return def
}

// toV2 removes from s (in place, recursively) what OpenAPI v2 cannot say or
// kubectl cannot handle.
func toV2(s map[string]any) {
	for _, k := range []string{"allOf", "oneOf", "anyOf", "not"} {
		delete(s, k)
	}
	if b, _ := s["nullable"].(bool); b {
		delete(s, "nullable")
		delete(s, "type")
		delete(s, "items")
		delete(s, "properties")
	}
	delete(s, "nullable")
	preserve, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	if preserve {
		delete(s, "items")
		delete(s, "properties")
	}
	if _, ok := s["items"]; !ok && s["type"] == "array" {
		delete(s, "type")
	}
	if preserve && s["type"] == "object" {
		delete(s, "type")
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if b, _ := ps["nullable"].(bool); b {
			s["required"] = without(s["required"], name)
		}
		toV2(ps)
	}
	if req, ok := s["required"].([]any); ok && len(req) == 0 {
		delete(s, "required")
	}
	if items, ok := s["items"].(map[string]any); ok {
		toV2(items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		if b, _ := ap["nullable"].(bool); b {
			delete(s, "required")
		}
		toV2(ap)
	}
}

func without(list any, name string) any {
	l, ok := list.([]any)
	if !ok {
		return list
	}
	out := make([]any, 0, len(l))
	for _, v := range l {
		if v != name {
			out = append(out, v)
		}
	}
	return out
}

// addTypeAndObjectMeta adds apiVersion, kind and metadata to a kind's or an
// embedded resource's properties.
func addTypeAndObjectMeta(s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": descAPIVersion}
	props["kind"] = map[string]any{"type": "string", "description": descKind}
	props["metadata"] = map[string]any{"$ref": "#/definitions/" + objectMetaRef, "description": descMetadata}
}

// addEmbeddedMeta adds apiVersion, kind and metadata (and requires the first
// two) in every x-kubernetes-embedded-resource below s, except where unknown
// fields are preserved (kubectl would then reject the unknown ones).
func addEmbeddedMeta(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if ps, ok := p.(map[string]any); ok {
				addEmbeddedMeta(ps)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]any); ok {
			addEmbeddedMeta(c)
		}
	}
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b {
		return
	}
	if b, _ := s["x-kubernetes-embedded-resource"].(bool); !b {
		return
	}
	addTypeAndObjectMeta(s)
	req, _ := s["required"].([]any)
	for _, f := range []string{"kind", "apiVersion"} {
		if !containsAny(req, f) {
			req = append(req, f)
		}
	}
	s["required"] = req
}

func containsAny(l []any, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// objectMetaDefinition is ObjectMeta's definition: every field, so that a
// client validating against it accepts what the server stores.
func objectMetaDefinition() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	strMap := func(desc string) map[string]any {
		return map[string]any{"type": "object", "description": desc, "additionalProperties": map[string]any{"type": "string", "default": ""}}
	}
	strList := func(desc string) map[string]any {
		return map[string]any{"type": "array", "description": desc, "items": map[string]any{"type": "string", "default": ""}}
	}
	date := func(desc string) map[string]any {
		return map[string]any{"type": "string", "format": "date-time", "description": desc}
	}
	integer := func(desc string) map[string]any {
		return map[string]any{"type": "integer", "format": "int64", "description": desc}
	}
	ownerRef := map[string]any{"type": "object", "required": []any{"apiVersion", "kind", "name", "uid"},
		"properties": map[string]any{
			"apiVersion": str("API version of the referent."), "kind": str("Kind of the referent."),
			"name": str("Name of the referent."), "uid": str("UID of the referent."),
			"controller":         map[string]any{"type": "boolean", "description": "If true, this reference points to the managing controller."},
			"blockOwnerDeletion": map[string]any{"type": "boolean", "description": "If true, the owner cannot be deleted from the key-value store until this reference is removed."},
		}, "x-kubernetes-map-type": "atomic"}
	managed := map[string]any{"type": "object", "properties": map[string]any{
		"apiVersion": str("APIVersion of the fields."), "fieldsType": str("The format of fieldsV1: FieldsV1."),
		"fieldsV1": map[string]any{"type": "object", "description": "The set of fields, in the FieldsV1 format."},
		"manager":  str("The workflow managing the fields."), "operation": str("Apply or Update."),
		"subresource": str("The subresource the fields were written through."), "time": date("When the fields were last changed."),
	}}
	return map[string]any{
		"type":        "object",
		"description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
		"properties": map[string]any{
			"annotations":                strMap("Annotations: unstructured key value map stored with a resource."),
			"creationTimestamp":          date("When this object was created."),
			"deletionGracePeriodSeconds": integer("Seconds allowed for graceful termination before the object is removed."),
			"deletionTimestamp":          date("When this object will be deleted."),
			"finalizers":                 strList("Must be empty before the object is deleted from the registry."),
			"generateName":               str("Optional prefix used by the server to generate a unique name."),
			"generation":                 integer("A sequence number representing a specific generation of the desired state."),
			"labels":                     strMap("Map of string keys and values that can be used to organize and categorize objects."),
			"managedFields":              map[string]any{"type": "array", "description": "Which managers own which fields.", "items": managed},
			"name":                       str("Name must be unique within a namespace."),
			"namespace":                  str("Namespace defines the space within which each name must be unique."),
			"ownerReferences": map[string]any{"type": "array", "description": "Objects depended on by this object.", "items": ownerRef,
				"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"uid"}, "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge"},
			"resourceVersion": str("An opaque value that represents the internal version of this object."),
			"selfLink":        str("Deprecated."),
			"uid":             str("UID is the unique in time and space value for this object."),
		},
	}
}
