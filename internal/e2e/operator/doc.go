// Package operator holds the end-to-end test of the operator story with the real
// converge binary: `converge operator build` a plugin, load it with
// `converge up --operator`, and watch it reconcile a custom resource.
package operator
