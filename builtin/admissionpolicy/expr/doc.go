// Package expr compiles and evaluates the CEL expressions of a
// ValidatingAdmissionPolicy (validations, messageExpressions, variables,
// auditAnnotations, matchConditions) in the environment Kubernetes gives them:
// object, oldObject, request, params, namespaceObject, authorizer and
// variables.NAME (each variable evaluated at most once per request, when an
// expression first uses it).
//
// Compile checks expressions against dynamic types (the checks of API
// validation and of admission); TypeCheck checks them against the declared
// types of the matched kinds and the parameter kind (the warnings of the
// policy's status.typeChecking).
package expr
