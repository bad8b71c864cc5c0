// Package api is Converge's object model: the pieces every Kubernetes-style object
// shares (TypeMeta, ObjectMeta, ListMeta, OwnerReference), group/version/kind and
// group/version/resource names, the Unstructured representation used for kinds the
// program has no Go type for, and the small value types that appear in many kinds
// (Time, IntOrString, Quantity, Condition, LabelSelector).
//
// JSON field names and semantics follow Kubernetes so that objects read and written
// by kubectl and client-go round-trip unchanged. Struct tags also carry the
// Kubernetes protobuf field numbers (`protobuf:"..."`) and strategic-merge-patch
// metadata (`patchStrategy`, `patchMergeKey`); they are data for the server's
// schema-driven decoders, not an import of Kubernetes code.
//
// The package has no behaviour beyond accessors and (de)serialisation; selectors
// live in the labels and fields sub-packages, API errors in errors, and field
// paths with validation errors in field.
package api
