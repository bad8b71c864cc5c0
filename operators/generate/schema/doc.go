// Package schema builds a CRD version's OpenAPI v3 schema from Go types with
// controller-gen's rules (sigs.k8s.io/controller-tools pkg/crd):
//
//   - struct fields by their json tags: "-" is skipped, ",inline" and
//     embedded structs without a name are merged into the parent, a field
//     is required unless it has omitempty/omitzero, +optional or
//     +kubebuilder:validation:Optional (or its package has
//     +kubebuilder:validation:Optional), and +required wins over omitempty;
//   - doc comments become descriptions (markers, TODO lines and everything
//     after a "---" line left out); a field's doc wins over its type's;
//   - a field of a named type gets the type's schema with the field's own
//     markers merged over it (merge.go: controller-gen's allOf flattening);
//   - Kubernetes' and Converge's special types (Time, Quantity,
//     IntOrString, RawExtension, ObjectMeta, ...) have fixed schemas
//     (known.go); a type with MarshalJSON takes its schema from its Type
//     marker, one with MarshalText is a string;
//   - markers are applied in controller-gen's order and checked against the
//     schema they apply to (apply.go), errors naming their file and line.
//
// One deliberate difference: a field's markers are checked against the
// resolved schema of its type, so +kubebuilder:validation:Pattern on a
// metav1.Duration field works where controller-gen reports "must apply
// pattern to a textual value".
package schema
