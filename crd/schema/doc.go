// Package schema implements the structural-schema rules of CRD schemas and the
// processing of custom resources against them: pruning of unknown fields,
// defaulting, OpenAPI validation (through santhosh-tekuri/jsonschema) with
// Kubernetes' error messages, and x-kubernetes-list-type checks.
package schema
