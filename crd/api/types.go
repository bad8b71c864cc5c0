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
	Metadata      fapi.ObjectMeta                `json:"metadata"`
	Spec          CustomResourceDefinitionSpec   `json:"spec"`
	Status        CustomResourceDefinitionStatus `json:"status,omitempty"`
}

// CustomResourceDefinitionSpec is the desired state of a CRD.
type CustomResourceDefinitionSpec struct {
	Group                 string                            `json:"group"`
	Names                 CustomResourceDefinitionNames     `json:"names"`
	Scope                 string                            `json:"scope"`
	Versions              []CustomResourceDefinitionVersion `json:"versions"`
	Conversion            *CustomResourceConversion         `json:"conversion,omitempty"`
	PreserveUnknownFields bool                              `json:"preserveUnknownFields,omitempty"`
}

// CustomResourceDefinitionNames are the names of the custom resource.
type CustomResourceDefinitionNames struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// CustomResourceDefinitionVersion is one version of the custom resource.
type CustomResourceDefinitionVersion struct {
	Name                     string                           `json:"name"`
	Served                   bool                             `json:"served"`
	Storage                  bool                             `json:"storage"`
	Deprecated               bool                             `json:"deprecated,omitempty"`
	DeprecationWarning       *string                          `json:"deprecationWarning,omitempty"`
	Schema                   *CustomResourceValidation        `json:"schema,omitempty"`
	Subresources             *CustomResourceSubresources      `json:"subresources,omitempty"`
	AdditionalPrinterColumns []CustomResourceColumnDefinition `json:"additionalPrinterColumns,omitempty"`
	SelectableFields         []SelectableField                `json:"selectableFields,omitempty"`
}

// SelectableField is a field usable in field selectors.
type SelectableField struct {
	JSONPath string `json:"jsonPath"`
}

// CustomResourceColumnDefinition is an additional printer column.
type CustomResourceColumnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// CustomResourceConversion says how versions are converted.
type CustomResourceConversion struct {
	Strategy string             `json:"strategy"`
	Webhook  *WebhookConversion `json:"webhook,omitempty"`
}

// WebhookConversion configures a conversion webhook.
type WebhookConversion struct {
	ClientConfig             *WebhookClientConfig `json:"clientConfig,omitempty"`
	ConversionReviewVersions []string             `json:"conversionReviewVersions"`
}

// WebhookClientConfig locates a webhook.
type WebhookClientConfig struct {
	URL      *string           `json:"url,omitempty"`
	Service  *ServiceReference `json:"service,omitempty"`
	CABundle []byte            `json:"caBundle,omitempty"`
}

// ServiceReference points at a service.
type ServiceReference struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      *int32  `json:"port,omitempty"`
}

// CustomResourceValidation holds the schema of a version.
type CustomResourceValidation struct {
	OpenAPIV3Schema *JSONSchemaProps `json:"openAPIV3Schema,omitempty"`
}

// CustomResourceSubresources are the subresources of a version.
type CustomResourceSubresources struct {
	Status *CustomResourceSubresourceStatus `json:"status,omitempty"`
	Scale  *CustomResourceSubresourceScale  `json:"scale,omitempty"`
}

// CustomResourceSubresourceStatus enables /status (no fields).
type CustomResourceSubresourceStatus struct{}

// CustomResourceSubresourceScale enables /scale.
type CustomResourceSubresourceScale struct {
	SpecReplicasPath   string  `json:"specReplicasPath"`
	StatusReplicasPath string  `json:"statusReplicasPath"`
	LabelSelectorPath  *string `json:"labelSelectorPath,omitempty"`
}

// CustomResourceDefinitionStatus is the observed state of a CRD.
type CustomResourceDefinitionStatus struct {
	Conditions     []CustomResourceDefinitionCondition `json:"conditions,omitempty"`
	AcceptedNames  CustomResourceDefinitionNames       `json:"acceptedNames"`
	StoredVersions []string                            `json:"storedVersions"`
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
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime fapi.Time `json:"lastTransitionTime,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
}

// JSONSchemaProps is a JSON-Schema following the OpenAPI v3 dialect of Kubernetes.
type JSONSchemaProps struct {
	ID                   string                                  `json:"id,omitempty"`
	Schema               string                                  `json:"$schema,omitempty"`
	Ref                  *string                                 `json:"$ref,omitempty"`
	Description          string                                  `json:"description,omitempty"`
	Type                 string                                  `json:"type,omitempty"`
	Format               string                                  `json:"format,omitempty"`
	Title                string                                  `json:"title,omitempty"`
	Default              *JSON                                   `json:"default,omitempty"`
	Maximum              *float64                                `json:"maximum,omitempty"`
	ExclusiveMaximum     bool                                    `json:"exclusiveMaximum,omitempty"`
	Minimum              *float64                                `json:"minimum,omitempty"`
	ExclusiveMinimum     bool                                    `json:"exclusiveMinimum,omitempty"`
	MaxLength            *int64                                  `json:"maxLength,omitempty"`
	MinLength            *int64                                  `json:"minLength,omitempty"`
	Pattern              string                                  `json:"pattern,omitempty"`
	MaxItems             *int64                                  `json:"maxItems,omitempty"`
	MinItems             *int64                                  `json:"minItems,omitempty"`
	UniqueItems          bool                                    `json:"uniqueItems,omitempty"`
	MultipleOf           *float64                                `json:"multipleOf,omitempty"`
	Enum                 []JSON                                  `json:"enum,omitempty"`
	MaxProperties        *int64                                  `json:"maxProperties,omitempty"`
	MinProperties        *int64                                  `json:"minProperties,omitempty"`
	Required             []string                                `json:"required,omitempty"`
	Items                *JSONSchemaPropsOrArray                 `json:"items,omitempty"`
	AllOf                []JSONSchemaProps                       `json:"allOf,omitempty"`
	OneOf                []JSONSchemaProps                       `json:"oneOf,omitempty"`
	AnyOf                []JSONSchemaProps                       `json:"anyOf,omitempty"`
	Not                  *JSONSchemaProps                        `json:"not,omitempty"`
	Properties           map[string]JSONSchemaProps              `json:"properties,omitempty"`
	AdditionalProperties *JSONSchemaPropsOrBool                  `json:"additionalProperties,omitempty"`
	PatternProperties    map[string]JSONSchemaProps              `json:"patternProperties,omitempty"`
	Dependencies         map[string]JSONSchemaPropsOrStringArray `json:"dependencies,omitempty"`
	AdditionalItems      *JSONSchemaPropsOrBool                  `json:"additionalItems,omitempty"`
	Definitions          map[string]JSONSchemaProps              `json:"definitions,omitempty"`
	ExternalDocs         *ExternalDocumentation                  `json:"externalDocs,omitempty"`
	Example              *JSON                                   `json:"example,omitempty"`
	Nullable             bool                                    `json:"nullable,omitempty"`

	XPreserveUnknownFields *bool            `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	XEmbeddedResource      bool             `json:"x-kubernetes-embedded-resource,omitempty"`
	XIntOrString           bool             `json:"x-kubernetes-int-or-string,omitempty"`
	XListMapKeys           []string         `json:"x-kubernetes-list-map-keys,omitempty"`
	XListType              *string          `json:"x-kubernetes-list-type,omitempty"`
	XMapType               *string          `json:"x-kubernetes-map-type,omitempty"`
	XValidations           []ValidationRule `json:"x-kubernetes-validations,omitempty"`
}

// PreservesUnknown reports x-kubernetes-preserve-unknown-fields: true.
func (s *JSONSchemaProps) PreservesUnknown() bool {
	return s != nil && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// ValidationRule is one x-kubernetes-validations entry.
type ValidationRule struct {
	Rule              string  `json:"rule"`
	Message           string  `json:"message,omitempty"`
	MessageExpression string  `json:"messageExpression,omitempty"`
	Reason            *string `json:"reason,omitempty"`
	FieldPath         string  `json:"fieldPath,omitempty"`
	OptionalOldSelf   *bool   `json:"optionalOldSelf,omitempty"`
}

// ExternalDocumentation links to more documentation.
type ExternalDocumentation struct {
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
}

// JSON is an arbitrary JSON value kept as raw bytes.
type JSON struct {
	Raw []byte
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
	Allows bool
	Schema *JSONSchemaProps
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
	Schema      *JSONSchemaProps
	JSONSchemas []JSONSchemaProps
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
	Schema   *JSONSchemaProps
	Property []string
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
