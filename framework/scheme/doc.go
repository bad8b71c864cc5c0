// Package scheme maps Go types to the GroupVersionKinds they represent, so that
// clients can turn a typed object into a REST path and a response back into a
// typed object.
//
// A Scheme holds two registries: object kinds (types implementing api.Object,
// e.g. ConfigMap) and list kinds (e.g. ConfigMapList, by convention Kind+"List").
// Each Go type maps to exactly one GroupVersionKind and each GroupVersionKind to
// exactly one Go type; registering a conflicting pair is an error.
//
// The framework registers nothing itself: packages that define API types offer
// an AddToScheme(*Scheme) error function, usually one call to AddKnownTypes.
//
// Concurrency: register everything before use; after that a Scheme is safe for
// concurrent readers (registration is also safe, but is meant for start-up).
package scheme
