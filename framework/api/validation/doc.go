// Package validation owns the generic, resource-independent validation rules of
// the Kubernetes API: the name formats (RFC 1123 subdomains and labels, RFC 1035
// labels, qualified names, label values) and the validation of ObjectMeta on
// create and update.
//
// Contract: every function is pure and safe for concurrent use. The Is* functions
// return nil for a valid value and otherwise one human-readable message per
// violated rule, with the exact wording Kubernetes uses, so that kubectl prints
// Converge's 422 Invalid responses exactly like a real cluster's. The Validate*
// functions return a field.ErrorList whose entries carry those messages at the
// field path they were given; they never return an error for a valid input.
//
// The texts follow k8s.io/apimachinery v0.32 (pkg/util/validation and
// pkg/api/validation); this package does not import it.
package validation
