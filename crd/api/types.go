package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	fapi "github.com/converge-dev/converge/framework/api"
)

// Group is the API group of CustomResourceDefinitions.
const Group = "apiextensions.k8s.io"

// Version is the served version of CustomResourceDefinitions.
const Version = "v1"

// CleanupFinalizer is added to every CRD; the lifecycle removes it once the
// custom resources are deleted.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// CustomResourceDefinition describes a custom resource.
type CustomResourceDefinition struct {
	fapi.TypeMeta `json:",inline"`
	Metadata      fapi.ObjectMeta                `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	Spec          CustomResourceDefinitionSpec   `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	Status        CustomResourceDefinitionStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// CustomResourceDefinitionSpec is the desired state of a CRD.
type CustomResourceDefinitionSpec struct {
	Group                 string                            `json:"group" protobuf:"bytes,1,opt,name=group"`
	Names                 CustomResourceDefinitionNames     `json:"names" protobuf:"bytes,3,opt,name=names"`
	Scope                 string                            `json:"scope" protobuf:"bytes,4,opt,name=scope"`
	Versions              []CustomResourceDefinitionVersion `json:"versions" protobuf:"bytes,7,rep,name=versions"`
	Conversion            *CustomResourceConversion         `json:"conversion,omitempty" protobuf:"bytes,9,opt,name=conversion"`
	PreserveUnknownFields bool                              `json:"preserveUnknownFields,omitempty" protobuf:"varint,10,opt,name=preserveUnknownFields"`
}

// CustomResourceDefinitionNames are the names of the custom resource.
type CustomResourceDefinitionNames struct {
	Plural     string   `json:"plural" protobuf:"bytes,1,opt,name=plural"`
	Singular   string   `json:"singular,omitempty" protobuf:"bytes,2,opt,name=singular"`
	ShortNames []string `json:"shortNames,omitempty" protobuf:"bytes,3,rep,name=shortNames"`
	Kind       string   `json:"kind" protobuf:"bytes,4,opt,name=kind"`
	ListKind   string   `json:"listKind,omitempty" protobuf:"bytes,5,opt,name=listKind"`
	Categories []string `json:"categories,omitempty" protobuf:"bytes,6,rep,name=categories"`
}

// CustomResourceDefinitionVersion is one version of the custom resource.
type CustomResourceDefinitionVersion struct {
	Name                     string                           `json:"name" protobuf:"bytes,1,opt,name=name"`
	Served                   bool                             `json:"served" protobuf:"varint,2,opt,name=served"`
	Storage                  bool                             `json:"storage" protobuf:"varint,3,opt,name=storage"`
	Deprecated               bool                             `json:"deprecated,omitempty" protobuf:"varint,7,opt,name=deprecated"`
	DeprecationWarning       *string                          `json:"deprecationWarning,omitempty" protobuf:"bytes,8,opt,name=deprecationWarning"`
	Schema                   *CustomResourceValidation        `json:"schema,omitempty" protobuf:"bytes,4,opt,name=schema"`
	Subresources             *CustomResourceSubresources      `json:"subresources,omitempty" protobuf:"bytes,5,opt,name=subresources"`
	AdditionalPrinterColumns []CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty" protobuf:"bytes,6,rep,name=additionalPrinterColumns"`
	SelectableFields         []SelectableField                `json:"selectableFields,omitempty" protobuf:"bytes,9,rep,name=selectableFields"`
}

// SelectableField is a field usable in field selectors.
type SelectableField struct {
	JSONPath string `json:"jsonPath" protobuf:"bytes,1,opt,name=jsonPath"`
}

// CustomResourceColumnDefinition is an additional printer column.
type CustomResourceColumnDefinition struct {
	Name        string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Type        string `json:"type" protobuf:"bytes,2,opt,name=type"`
	Format      string `json:"format,omitempty" protobuf:"bytes,3,opt,name=format"`
	Description string `json:"description,omitempty" protobuf:"bytes,4,opt,name=description"`
	Priority    int32  `json:"priority,omitempty" protobuf:"varint,5,opt,name=priority"`
	JSONPath    string `json:"jsonPath" protobuf:"bytes,6,opt,name=jsonPath"`
}

// CustomResourceConversion says how versions are converted.
type CustomResourceConversion struct {
	Strategy string             `json:"strategy" protobuf:"bytes,1,opt,name=strategy"`
	Webhook  *WebhookConversion `json:"webhook,omitempty" protobuf:"bytes,2,opt,name=webhook"`
}

// WebhookConversion configures a conversion webhook.
type WebhookConversion struct {
	ClientConfig             *WebhookClientConfig `json:"clientConfig,omitempty" protobuf:"bytes,2,opt,name=clientConfig"`
	ConversionReviewVersions []string             `json:"conversionReviewVersions" protobuf:"bytes,3,rep,name=conversionReviewVersions"`
}

// WebhookClientConfig locates a webhook.
type WebhookClientConfig struct {
	URL      *string           `json:"url,omitempty" protobuf:"bytes,3,opt,name=url"`
	Service  *ServiceReference `json:"service,omitempty" protobuf:"bytes,1,opt,name=service"`
	CABundle []byte            `json:"caBundle,omitempty" protobuf:"bytes,2,opt,name=caBundle"`
}

// ServiceReference points at a service.
type ServiceReference struct {
	Namespace string  `json:"namespace" protobuf:"bytes,1,opt,name=namespace"`
	Name      string  `json:"name" protobuf:"bytes,2,opt,name=name"`
	Path      *string `json:"path,omitempty" protobuf:"bytes,3,opt,name=path"`
	Port      *int32  `json:"port,omitempty" protobuf:"varint,4,opt,name=port"`
}

// CustomResourceValidation holds the schema of a version.
type CustomResourceValidation struct {
	OpenAPIV3Schema *JSONSchemaProps `json:"openAPIV3Schema,omitempty" protobuf:"bytes,1,opt,name=openAPIV3Schema"`
}

// CustomResourceSubresources are the subresources of a version.
type CustomResourceSubresources struct {
	Status *CustomResourceSubresourceStatus `json:"status,omitempty" protobuf:"bytes,1,opt,name=status"`
	Scale  *CustomResourceSubresourceScale  `json:"scale,omitempty" protobuf:"bytes,2,opt,name=scale"`
}

// CustomResourceSubresourceStatus enables /status (no fields).
type CustomResourceSubresourceStatus struct{}

// CustomResourceSubresourceScale enables /scale.
type CustomResourceSubresourceScale struct {
	SpecReplicasPath   string  `json:"specReplicasPath" protobuf:"bytes,1,opt,name=specReplicasPath"`
	StatusReplicasPath string  `json:"statusReplicasPath" protobuf:"bytes,2,opt,name=statusReplicasPath"`
	LabelSelectorPath  *string `json:"labelSelectorPath,omitempty" protobuf:"bytes,3,opt,name=labelSelectorPath"`
}

// CustomResourceDefinitionStatus is the observed state of a CRD.
type CustomResourceDefinitionStatus struct {
	Conditions     []CustomResourceDefinitionCondition `json:"conditions,omitempty" protobuf:"bytes,1,rep,name=conditions"`
	AcceptedNames  CustomResourceDefinitionNames       `json:"acceptedNames" protobuf:"bytes,2,opt,name=acceptedNames"`
	StoredVersions []string                            `json:"storedVersions" protobuf:"bytes,3,rep,name=storedVersions"`
}

// Condition types and statuses.
const (
	Established    = "Established"
	NamesAccepted  = "NamesAccepted"
	Terminating    = "Terminating"
	NonStructural  = "NonStructuralSchema"
	ConditionTrue  = "True"
	ConditionFalse = "False"
)

// CustomResourceDefinitionCondition is one status condition.
type CustomResourceDefinitionCondition struct {
	Type               string    `json:"type" protobuf:"bytes,1,opt,name=type"`
	Status             string    `json:"status" protobuf:"bytes,2,opt,name=status"`
	LastTransitionTime fapi.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,3,opt,name=lastTransitionTime"`
	Reason             string    `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	Message            string    `json:"message,omitempty" protobuf:"bytes,5,opt,name=message"`
}

// JSONSchemaProps is a JSON-Schema following the OpenAPI v3 dialect of Kubernetes.
type JSONSchemaProps struct {
	ID                   string                                  `json:"id,omitempty" protobuf:"bytes,1,opt,name=id"`
	Schema               string                                  `json:"$schema,omitempty" protobuf:"bytes,2,opt,name=schema"`
	Ref                  *string                                 `json:"$ref,omitempty" protobuf:"bytes,3,opt,name=ref"`
	Description          string                                  `json:"description,omitempty" protobuf:"bytes,4,opt,name=description"`
	Type                 string                                  `json:"type,omitempty" protobuf:"bytes,5,opt,name=type"`
	Format               string                                  `json:"format,omitempty" protobuf:"bytes,6,opt,name=format"`
	Title                string                                  `json:"title,omitempty" protobuf:"bytes,7,opt,name=title"`
	Default              *JSON                                   `json:"default,omitempty" protobuf:"bytes,8,opt,name=default"`
	Maximum              *float64                                `json:"maximum,omitempty" protobuf:"fixed64,9,opt,name=maximum"`
	ExclusiveMaximum     bool                                    `json:"exclusiveMaximum,omitempty" protobuf:"varint,10,opt,name=exclusiveMaximum"`
	Minimum              *float64                                `json:"minimum,omitempty" protobuf:"fixed64,11,opt,name=minimum"`
	ExclusiveMinimum     bool                                    `json:"exclusiveMinimum,omitempty" protobuf:"varint,12,opt,name=exclusiveMinimum"`
	MaxLength            *int64                                  `json:"maxLength,omitempty" protobuf:"varint,13,opt,name=maxLength"`
	MinLength            *int64                                  `json:"minLength,omitempty" protobuf:"varint,14,opt,name=minLength"`
	Pattern              string                                  `json:"pattern,omitempty" protobuf:"bytes,15,opt,name=pattern"`
	MaxItems             *int64                                  `json:"maxItems,omitempty" protobuf:"varint,16,opt,name=maxItems"`
	MinItems             *int64                                  `json:"minItems,omitempty" protobuf:"varint,17,opt,name=minItems"`
	UniqueItems          bool                                    `json:"uniqueItems,omitempty" protobuf:"varint,18,opt,name=uniqueItems"`
	MultipleOf           *float64                                `json:"multipleOf,omitempty" protobuf:"fixed64,19,opt,name=multipleOf"`
	Enum                 []JSON                                  `json:"enum,omitempty" protobuf:"bytes,20,rep,name=enum"`
	MaxProperties        *int64                                  `json:"maxProperties,omitempty" protobuf:"varint,21,opt,name=maxProperties"`
	MinProperties        *int64                                  `json:"minProperties,omitempty" protobuf:"varint,22,opt,name=minProperties"`
	Required             []string                                `json:"required,omitempty" protobuf:"bytes,23,rep,name=required"`
	Items                *JSONSchemaPropsOrArray                 `json:"items,omitempty" protobuf:"bytes,24,opt,name=items"`
	AllOf                []JSONSchemaProps                       `json:"allOf,omitempty" protobuf:"bytes,25,rep,name=allOf"`
	OneOf                []JSONSchemaProps                       `json:"oneOf,omitempty" protobuf:"bytes,26,rep,name=oneOf"`
	AnyOf                []JSONSchemaProps                       `json:"anyOf,omitempty" protobuf:"bytes,27,rep,name=anyOf"`
	Not                  *JSONSchemaProps                        `json:"not,omitempty" protobuf:"bytes,28,opt,name=not"`
	Properties           map[string]JSONSchemaProps              `json:"properties,omitempty" protobuf:"bytes,29,rep,name=properties" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	AdditionalProperties *JSONSchemaPropsOrBool                  `json:"additionalProperties,omitempty" protobuf:"bytes,30,opt,name=additionalProperties"`
	PatternProperties    map[string]JSONSchemaProps              `json:"patternProperties,omitempty" protobuf:"bytes,31,rep,name=patternProperties" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Dependencies         map[string]JSONSchemaPropsOrStringArray `json:"dependencies,omitempty" protobuf:"bytes,32,rep,name=dependencies" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	AdditionalItems      *JSONSchemaPropsOrBool                  `json:"additionalItems,omitempty" protobuf:"bytes,33,opt,name=additionalItems"`
	Definitions          map[string]JSONSchemaProps              `json:"definitions,omitempty" protobuf:"bytes,34,rep,name=definitions" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	ExternalDocs         *ExternalDocumentation                  `json:"externalDocs,omitempty" protobuf:"bytes,35,opt,name=externalDocs"`
	Example              *JSON                                   `json:"example,omitempty" protobuf:"bytes,36,opt,name=example"`
	Nullable             bool                                    `json:"nullable,omitempty" protobuf:"varint,37,opt,name=nullable"`

	XPreserveUnknownFields *bool            `json:"x-kubernetes-preserve-unknown-fields,omitempty" protobuf:"varint,38,opt,name=xKubernetesPreserveUnknownFields"`
	XEmbeddedResource      bool             `json:"x-kubernetes-embedded-resource,omitempty" protobuf:"varint,39,opt,name=xKubernetesEmbeddedResource"`
	XIntOrString           bool             `json:"x-kubernetes-int-or-string,omitempty" protobuf:"varint,40,opt,name=xKubernetesIntOrString"`
	XListMapKeys           []string         `json:"x-kubernetes-list-map-keys,omitempty" protobuf:"bytes,41,rep,name=xKubernetesListMapKeys"`
	XListType              *string          `json:"x-kubernetes-list-type,omitempty" protobuf:"bytes,42,opt,name=xKubernetesListType"`
	XMapType               *string          `json:"x-kubernetes-map-type,omitempty" protobuf:"bytes,43,opt,name=xKubernetesMapType"`
	XValidations           []ValidationRule `json:"x-kubernetes-validations,omitempty" protobuf:"bytes,44,rep,name=xKubernetesValidations"`
}

// PreservesUnknown reports x-kubernetes-preserve-unknown-fields: true.
func (s *JSONSchemaProps) PreservesUnknown() bool {
	return s != nil && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// ValidationRule is one x-kubernetes-validations entry.
type ValidationRule struct {
	Rule              string  `json:"rule" protobuf:"bytes,1,opt,name=rule"`
	Message           string  `json:"message,omitempty" protobuf:"bytes,2,opt,name=message"`
	MessageExpression string  `json:"messageExpression,omitempty" protobuf:"bytes,3,opt,name=messageExpression"`
	Reason            *string `json:"reason,omitempty" protobuf:"bytes,4,opt,name=reason"`
	FieldPath         string  `json:"fieldPath,omitempty" protobuf:"bytes,5,opt,name=fieldPath"`
	OptionalOldSelf   *bool   `json:"optionalOldSelf,omitempty" protobuf:"varint,6,opt,name=optionalOldSelf"`
}

// ExternalDocumentation links to more documentation.
type ExternalDocumentation struct {
	Description string `json:"description,omitempty" protobuf:"bytes,1,opt,name=description"`
	URL         string `json:"url,omitempty" protobuf:"bytes,2,opt,name=url"`
}

// JSON is an arbitrary JSON value kept as raw bytes.
type JSON struct {
	Raw []byte `protobuf:"bytes,1,opt,name=raw"`
}

// MarshalJSON implements json.Marshaler.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j.Raw) == 0 {
		return []byte("null"), nil
	}
	return j.Raw, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (j *JSON) UnmarshalJSON(b []byte) error {
	j.Raw = append([]byte(nil), b...)
	return nil
}

// Value decodes the raw JSON (integers as int64).
func (j *JSON) Value() (any, error) {
	if j == nil || len(j.Raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(j.Raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode JSON value: %w", err)
	}
	return fapi.NormalizeNumbers(v), nil
}

// JSONSchemaPropsOrBool is a schema or a boolean (additionalProperties).
type JSONSchemaPropsOrBool struct {
	Allows bool             `protobuf:"varint,1,opt,name=allows"`
	Schema *JSONSchemaProps `protobuf:"bytes,2,opt,name=schema"`
}

// MarshalJSON implements json.Marshaler.
func (s JSONSchemaPropsOrBool) MarshalJSON() ([]byte, error) {
	if s.Schema != nil {
		return json.Marshal(s.Schema)
	}
	return json.Marshal(s.Allows)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *JSONSchemaPropsOrBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '{':
		var p JSONSchemaProps
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		*s = JSONSchemaPropsOrBool{Allows: true, Schema: &p}
	case string(b) == "true":
		*s = JSONSchemaPropsOrBool{Allows: true}
	case string(b) == "false", string(b) == "null":
		*s = JSONSchemaPropsOrBool{}
	default:
		return fmt.Errorf("JSONSchemaPropsOrBool: expected an object or a boolean, got %s", b)
	}
	return nil
}

// JSONSchemaPropsOrArray is a schema or a list of schemas (items).
type JSONSchemaPropsOrArray struct {
	Schema      *JSONSchemaProps  `protobuf:"bytes,1,opt,name=schema"`
	JSONSchemas []JSONSchemaProps `protobuf:"bytes,2,rep,name=jSONSchemas"`
}

// MarshalJSON implements json.Marshaler.
func (s JSONSchemaPropsOrArray) MarshalJSON() ([]byte, error) {
	if len(s.JSONSchemas) > 0 {
		return json.Marshal(s.JSONSchemas)
	}
	return json.Marshal(s.Schema)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *JSONSchemaPropsOrArray) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		s.Schema = nil
		return json.Unmarshal(b, &s.JSONSchemas)
	}
	var p JSONSchemaProps
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	s.Schema, s.JSONSchemas = &p, nil
	return nil
}

// JSONSchemaPropsOrStringArray is a schema or a list of property names (dependencies).
type JSONSchemaPropsOrStringArray struct {
	Schema   *JSONSchemaProps `protobuf:"bytes,1,opt,name=schema"`
	Property []string         `protobuf:"bytes,2,rep,name=property"`
}

// MarshalJSON implements json.Marshaler.
func (s JSONSchemaPropsOrStringArray) MarshalJSON() ([]byte, error) {
	if len(s.Property) > 0 {
		return json.Marshal(s.Property)
	}
	return json.Marshal(s.Schema)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *JSONSchemaPropsOrStringArray) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		s.Schema = nil
		return json.Unmarshal(b, &s.Property)
	}
	var p JSONSchemaProps
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	s.Schema, s.Property = &p, nil
	return nil
}

// FromMap decodes a CRD from its object map.
func FromMap(obj map[string]any) (*CustomResourceDefinition, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode CRD: %w", err)
	}
	var c CustomResourceDefinition
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("decode CRD: %w", err)
	}
	return &c, nil
}

// StorageVersion returns the name of the storage version, or "".
func (c *CustomResourceDefinition) StorageVersion() string {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}
