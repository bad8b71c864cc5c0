// Package api holds the Go types of apiextensions.k8s.io/v1 CustomResourceDefinition,
// including the JSONSchemaProps tree of a version's openAPIV3Schema.
//
// The `protobuf` struct tags carry the field numbers of Kubernetes'
// apiextensions/v1 generated.proto, so that the API server's schema-driven
// decoder (framework/apiserver/protobuf) reads CRDs that clients send as
// application/vnd.kubernetes.protobuf. JSON, default, example and enum values
// are JSON{raw = 1} messages holding JSON text; JSONSchemaPropsOrBool,
// JSONSchemaPropsOrArray and JSONSchemaPropsOrStringArray are ordinary
// messages whose fields render through their MarshalJSON methods.
package api
