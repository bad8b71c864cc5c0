package apiserver

import (
	"strings"

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
		defs[schemaName(res)] = kindSchema(res.Schema, gvk, true)
	}
	if len(defs) > 0 {
		defs[objectMetaRef] = objectMetaDefinition()
	}
	return defs
}

// kindSchema is the published schema of a kind with the v3 schema s: for
// OpenAPI v2 (v2: made v2-compatible, references under #/definitions/) or
// v3 (the schema as it is, references under #/components/schemas/).
func kindSchema(s map[string]any, gvk []any, v2 bool) map[string]any {
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b && v2 {
		return map[string]any{"type": "object", "x-kubernetes-group-version-kind": gvk}
	}
	def := api.DeepCopyJSON(s)
	if v2 {
		toV2(def)
	}
	ref := objectMetaRefIn(v2)
	addTypeAndObjectMeta(def, ref)
	addEmbeddedMeta(def, ref, v2)
	def["x-kubernetes-group-version-kind"] = gvk
	return def
}

// objectMetaRefIn is the reference to ObjectMeta in an OpenAPI v2 or v3
// document.
func objectMetaRefIn(v2 bool) string {
	if v2 {
		return "#/definitions/" + objectMetaRef
	}
	return "#/components/schemas/" + objectMetaRef
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
func addTypeAndObjectMeta(s map[string]any, ref string) {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": descAPIVersion}
	props["kind"] = map[string]any{"type": "string", "description": descKind}
	if strings.HasPrefix(ref, "#/definitions/") {
		props["metadata"] = map[string]any{"$ref": ref, "description": descMetadata}
	} else {
		// OpenAPI v3 ignores the siblings of a $ref: the description
		// stays with an allOf around it, as kube-openapi writes it (and
		// kubectl explain shows it).
		props["metadata"] = map[string]any{"allOf": []any{map[string]any{"$ref": ref}}, "description": descMetadata}
	}
}

// addEmbeddedMeta adds apiVersion, kind and metadata (and requires the first
// two) in every x-kubernetes-embedded-resource below s, except, in v2, where
// unknown fields are preserved (kubectl would then reject the unknown ones).
func addEmbeddedMeta(s map[string]any, ref string, v2 bool) {
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if ps, ok := p.(map[string]any); ok {
				addEmbeddedMeta(ps, ref, v2)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if c, ok := s[k].(map[string]any); ok {
			addEmbeddedMeta(c, ref, v2)
		}
	}
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b && v2 {
		return
	}
	if b, _ := s["x-kubernetes-embedded-resource"].(bool); !b {
		return
	}
	addTypeAndObjectMeta(s, ref)
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
			"annotations":                strMap("Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."),
			"creationTimestamp":          date("CreationTimestamp is a timestamp representing the server time when this object was created. It is set by the server on create and may not be set by clients."),
			"deletionGracePeriodSeconds": integer("DeletionGracePeriodSeconds is the number of seconds allowed for this object to terminate gracefully before it is removed."),
			"deletionTimestamp":          date("DeletionTimestamp is the time after which this resource will be deleted, set by the server when a graceful deletion is requested."),
			"finalizers":                 strList("Finalizers must be empty before the object is deleted from the registry. Each entry names a component responsible for removing it."),
			"generateName":               str("GenerateName is an optional prefix, used by the server to generate a unique name only if the Name field has not been provided."),
			"generation":                 integer("Generation is a sequence number representing a specific generation of the desired state, set by the system."),
			"labels":                     strMap("Labels is a map of string keys and values that can be used to organize and categorize (scope and select) objects."),
			"managedFields":              map[string]any{"type": "array", "description": "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow.", "items": managed},
			"name":                       str("Name must be unique within a namespace. It is required when creating resources, although some resources may allow a client to request the generation of a name."),
			"namespace":                  str("Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the default namespace."),
			"ownerReferences": map[string]any{"type": "array", "description": "OwnerReferences lists the objects depended on by this object. If all of them are deleted, this object is garbage collected.", "items": ownerRef,
				"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"uid"}, "x-kubernetes-patch-merge-key": "uid", "x-kubernetes-patch-strategy": "merge"},
			"resourceVersion": str("ResourceVersion is an opaque value that represents the internal version of this object, used by clients to determine when objects have changed."),
			"selfLink":        str("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
			"uid":             str("UID is the unique in time and space value for this object. It is generated by the server on successful creation of a resource."),
		},
	}
}
