// Package api holds the Go types of apiextensions.k8s.io/v1 CustomResourceDefinition,
// including the JSONSchemaProps tree of a version's openAPIV3Schema.
package api
