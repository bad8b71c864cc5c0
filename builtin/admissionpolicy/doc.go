// Package admissionpolicy enforces ValidatingAdmissionPolicies
// (admissionregistration.k8s.io/v1) in admission, as Kubernetes' plugin does:
// every binding whose policy's matchConstraints and own matchResources select
// a request, with its parameters (paramKind/paramRef), matchConditions,
// validations, auditAnnotations and validationActions (Deny, Warn, Audit),
// under the policy's failurePolicy. Policies and bindings are read from the
// API server's watch cache at each write (so a change applies to the next
// request) and compiled once per stored version; a write that no binding
// exists for costs one cache read.
//
// StatusController writes each policy's status.typeChecking (expressions
// checked against the declared types of the kinds it matches) and
// status.observedGeneration.
package admissionpolicy
