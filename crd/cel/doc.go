// Package cel compiles and evaluates the x-kubernetes-validations rules of a CRD
// schema: rule, message, messageExpression, fieldPath and reason, with self and
// (for transition rules, on update only) oldSelf, under a per-call cost limit.
package cel
