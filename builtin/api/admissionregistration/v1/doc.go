// Package v1 holds the admissionregistration.k8s.io/v1 kinds
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration (types,
// defaults, validation, registration) and Hooks, which turns them into the
// webhook caller's admission.Hook values.
package v1
