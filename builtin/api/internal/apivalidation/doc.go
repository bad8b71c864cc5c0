// Package apivalidation holds the field rules that several built-in API groups
// (core, apps, batch, policy) share and framework/api/validation does not
// provide: non-negative integers, int-or-percent fields and label selectors whose
// values must be label values.
//
// Contract: every function is pure and safe for concurrent use, and returns
// Kubernetes' messages (k8s.io/kubernetes pkg/apis/apps/validation and
// apimachinery's ValidateNonnegativeField and ValidateLabelSelector with
// AllowInvalidLabelValueInSelector false) at the field path it is given. They
// belong in framework/api/validation; this package is where they wait.
package apivalidation
