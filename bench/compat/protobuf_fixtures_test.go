package compat

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// protoMessage is a Kubernetes type with its generated (gogo) Marshal.
type protoMessage interface {
	Marshal() ([]byte, error)
}

// protobufFixture is one object whose upstream protobuf body and JSON are kept
// as test data in the main module, where the decoder's unit tests read them.
type protobufFixture struct {
	// dir is the testdata directory, relative to bench/compat.
	dir, name  string
	apiVersion string
	kind       string
	obj        protoMessage
}

// protobufFixtures are the objects whose encodings the main module's decoder
// tests check against: a CustomResourceDefinition exercising every kind of
// JSONSchemaProps field, the bodies of the scale, eviction and binding
// subresources, and a SubjectAccessReview whose extra is a
// map<string, ExtraValue>.
func protobufFixtures() []protobufFixture {
	return []protobufFixture{
		{dir: "../../crd/api/testdata", name: "crd", apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", obj: fixtureCRD()},
		{dir: "../../framework/apiserver/testdata", name: "scale", apiVersion: "autoscaling/v1", kind: "Scale", obj: &autoscalingv1.Scale{
			TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "42", UID: "6f1f6c2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f"},
			Spec:       autoscalingv1.ScaleSpec{Replicas: 5},
			Status:     autoscalingv1.ScaleStatus{Replicas: 2, Selector: "app=web"},
		}},
		{dir: "../../builtin/api/core/v1/testdata", name: "eviction", apiVersion: "policy/v1", kind: "Eviction", obj: &policyv1.Eviction{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
			ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "default"},
			DeleteOptions: &metav1.DeleteOptions{
				GracePeriodSeconds: ptr.To[int64](0),
				Preconditions:      &metav1.Preconditions{UID: ptr.To[types.UID]("6f1f6c2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f")},
				DryRun:             []string{"All"},
			},
		}},
		{dir: "../../builtin/api/core/v1/testdata", name: "binding", apiVersion: "v1", kind: "Binding", obj: &corev1.Binding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
			ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "default", Annotations: map[string]string{"a": "b"}},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1", APIVersion: "v1"},
		}},
		{dir: "../../builtin/api/authorization/v1/testdata", name: "subjectaccessreview", apiVersion: "authorization.k8s.io/v1",
			kind: "SubjectAccessReview", obj: &authorizationv1.SubjectAccessReview{
				TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
				Spec: authorizationv1.SubjectAccessReviewSpec{User: "jane", Groups: []string{"dev", "ops"}, UID: "u-1",
					Extra:              map[string]authorizationv1.ExtraValue{"scopes": {"read", "write"}, "empty": {}, "one": {"x"}},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "get", Resource: "pods", Name: "p1"}},
			}},
	}
}

func fixtureCRD() *apiextensionsv1.CustomResourceDefinition {
	raw := func(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	spec := apiextensionsv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"size"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"size": {Type: "integer", Format: "int32", Minimum: ptr.To(1.0), Maximum: ptr.To(10.5), ExclusiveMaximum: true,
				MultipleOf: ptr.To(0.5), Default: raw(`3`), Description: "how many"},
			"color": {Type: "string", Enum: []apiextensionsv1.JSON{*raw(`"red"`), *raw(`"green"`)}, Default: raw(`"red"`),
				Pattern: "^[a-z]+$", MinLength: ptr.To[int64](1), MaxLength: ptr.To[int64](20), Example: raw(`"green"`)},
			"port":  {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
			"extra": {Type: "object", XPreserveUnknownFields: ptr.To(true), Nullable: true},
			"labels": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str},
				XMapType: ptr.To("granular"), MaxProperties: ptr.To[int64](8), MinProperties: ptr.To[int64](0)},
			"ports": {Type: "array", XListType: ptr.To("map"), XListMapKeys: []string{"name"}, MaxItems: ptr.To[int64](4),
				MinItems: ptr.To[int64](1), UniqueItems: false,
				Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Required: []string{"name"},
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": str, "number": {Type: "integer", Default: raw(`80`)}},
				}}},
			"template": {Type: "object", XEmbeddedResource: true, XPreserveUnknownFields: ptr.To(true)},
			"defaults": {Type: "object", Default: raw(`{"a":[1,"x"],"b":{}}`), Example: raw(`{"a":[1,2.5,"x",true,null],"b":{}}`),
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{
					Schema: &apiextensionsv1.JSONSchemaProps{XIntOrString: true}}}, "b": {Type: "object"}}},
			"nested": {Type: "object", Not: &apiextensionsv1.JSONSchemaProps{Required: []string{"forbidden"}},
				OneOf: []apiextensionsv1.JSONSchemaProps{{Required: []string{"x"}}, {Required: []string{"y"}}},
				AllOf: []apiextensionsv1.JSONSchemaProps{{Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str}}},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": str, "y": str,
					"deep": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"deeper": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
							Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"leaf": {Type: "number", Format: "double"}}}}}}}}},
		},
		XValidations: apiextensionsv1.ValidationRules{
			{Rule: "self.size <= 10", Message: "too big", Reason: ptr.To(apiextensionsv1.FieldValueInvalid), FieldPath: ".size"},
			{Rule: "self.color == oldSelf.color", MessageExpression: "'color is immutable: ' + self.color", OptionalOldSelf: ptr.To(true)},
		},
	}
	root := apiextensionsv1.JSONSchemaProps{
		Type: "object", Description: "A widget.", Title: "Widget",
		ExternalDocs: &apiextensionsv1.ExternalDocumentation{Description: "docs", URL: "https://example.com/widgets"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"apiVersion": str, "kind": str, "metadata": {Type: "object"},
			"spec":   spec,
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "integer"}, "selector": str}},
		},
	}
	v1beta1 := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.pb.example.com", Labels: map[string]string{"app": "compat"},
			Annotations: map[string]string{"note": "protobuf"}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "pb.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget",
				ListKind: "WidgetList", ShortNames: []string{"wg"}, Categories: []string{"all", "compat"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &root},
					Subresources: &apiextensionsv1.CustomResourceSubresources{
						Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
						Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.size",
							StatusReplicasPath: ".status.ready", LabelSelectorPath: ptr.To(".status.selector")},
					},
					AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
						{Name: "Size", Type: "integer", JSONPath: ".spec.size", Description: "the size", Priority: 1},
						{Name: "Color", Type: "string", Format: "", JSONPath: ".spec.color"},
					},
					SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}},
				},
				{Name: "v1beta1", Served: true, Storage: false, Deprecated: true, DeprecationWarning: ptr.To("use v1"),
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &v1beta1}},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
	}
}

// fixtureWebhookConversion is a conversion webhook for the crd-webhook
// fixture; fixtureCRD itself converts with None so that the server can serve
// it without a webhook.
func fixtureWebhookConversion() *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1", "v1beta1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: []byte{0, 1, 2, 0xff},
				Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "conv", Path: ptr.To("/convert"), Port: ptr.To[int32](8443)}}}}
}

// protobufBody is obj as a Kubernetes protobuf request body: the "k8s\x00"
// prefix and a runtime.Unknown envelope around obj's generated encoding.
func protobufBody(t *testing.T, apiVersion, kind string, obj protoMessage) []byte {
	t.Helper()
	raw, err := obj.Marshal()
	if err != nil {
		t.Fatalf("marshal %s: %v", kind, err)
	}
	env, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}).Marshal()
	if err != nil {
		t.Fatalf("marshal envelope of %s: %v", kind, err)
	}
	return append([]byte("k8s\x00"), env...)
}

// TestProtobufFixtures keeps the main module's protobuf test data equal to
// what Kubernetes' generated code produces: NAME.pb is the protobuf body and
// NAME.json the object as Kubernetes renders it in JSON. Set
// UPDATE_PROTOBUF_FIXTURES=1 to rewrite them.
func TestProtobufFixtures(t *testing.T) {
	update := os.Getenv("UPDATE_PROTOBUF_FIXTURES") != ""
	fixtures := protobufFixtures()
	crd := fixtureCRD()
	crd.Name = "webhooks.pb.example.com"
	crd.Spec.Names.Plural, crd.Spec.Names.ListKind = "webhooks", "WebhookList"
	crd.Spec.Conversion = fixtureWebhookConversion()
	crd.Spec.PreserveUnknownFields = false
	// additionalProperties: false beside properties, which only the server's
	// validation refuses: the decoder must still read the boolean form.
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["closed"] = apiextensionsv1.JSONSchemaProps{
		Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: false},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}}}
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{
		AcceptedNames:  crd.Spec.Names,
		StoredVersions: []string{"v1"},
		Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established,
			Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
			LastTransitionTime: metav1.Unix(1700000000, 0)}},
	}
	fixtures = append(fixtures, protobufFixture{dir: "../../crd/api/testdata", name: "crd-webhook",
		apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", obj: crd})
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			pb := protobufBody(t, f.apiVersion, f.kind, f.obj)
			js, err := json.MarshalIndent(f.obj, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			js = append(js, '\n')
			for ext, want := range map[string][]byte{".pb": pb, ".json": js} {
				path := filepath.Join(f.dir, f.name+ext)
				if update {
					if err := os.MkdirAll(f.dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, want, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with UPDATE_PROTOBUF_FIXTURES=1 to write it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from Kubernetes' encoding (run with UPDATE_PROTOBUF_FIXTURES=1 to rewrite it)", path)
				}
			}
		})
	}
}
