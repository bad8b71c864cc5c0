package schema

import crdapi "github.com/converge-dev/converge/crd/api"

// QuantityPattern is the pattern of a resource quantity, as controller-gen
// writes it for resource.Quantity.
const QuantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

const (
	metav1       = "k8s.io/apimachinery/pkg/apis/meta/v1"
	convergeAPI  = "github.com/converge-dev/converge/framework/api"
	convergeCRDs = "github.com/converge-dev/converge/crd/api"
)

// Known returns the fixed schema of a type whose JSON form its Go structure
// does not tell: Kubernetes' (as controller-gen's known types) and their
// Converge equivalents in framework/api.
func Known(pkg, name string) (crdapi.JSONSchemaProps, bool) {
	t := true
	intOrString := crdapi.JSONSchemaProps{XIntOrString: true,
		AnyOf: []crdapi.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}}
	quantity := intOrString
	quantity.Pattern = QuantityPattern
	switch pkg + "." + name {
	case metav1 + ".ObjectMeta", convergeAPI + ".ObjectMeta",
		"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured.Unstructured", convergeAPI + ".Unstructured":
		return crdapi.JSONSchemaProps{Type: "object"}, true
	case metav1 + ".Time", metav1 + ".MicroTime", convergeAPI + ".Time", convergeAPI + ".MicroTime":
		return crdapi.JSONSchemaProps{Type: "string", Format: "date-time"}, true
	case metav1 + ".Duration", convergeAPI + ".Duration":
		return crdapi.JSONSchemaProps{Type: "string"}, true
	case metav1 + ".Fields":
		return crdapi.JSONSchemaProps{Type: "object", AdditionalProperties: &crdapi.JSONSchemaPropsOrBool{Allows: true}}, true
	case "k8s.io/apimachinery/pkg/api/resource.Quantity", convergeAPI + ".Quantity":
		return quantity, true
	case "k8s.io/apimachinery/pkg/util/intstr.IntOrString", convergeAPI + ".IntOrString":
		return intOrString, true
	case "k8s.io/apimachinery/pkg/runtime.RawExtension", convergeAPI + ".RawExtension":
		return crdapi.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &t}, true
	case "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON",
		"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1.JSON", convergeCRDs + ".JSON":
		return crdapi.JSONSchemaProps{XPreserveUnknownFields: &t}, true
	}
	return crdapi.JSONSchemaProps{}, false
}
