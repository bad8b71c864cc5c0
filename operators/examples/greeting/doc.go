// Package greeting is the smallest useful operator, used by the SDK's tests
// and documentation: a Greeting (examples.converge.dev/v1alpha1) with
// spec.message gets a ConfigMap "greeting-<name>" holding the message, owned
// by the Greeting, a finalizer, and a Ready condition in its status.
//
// Its main package (./plugin) is both a Go plugin (it exports Operator) and a
// standalone program (its main calls run.Main).
package greeting
