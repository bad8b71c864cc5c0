// Package field describes validation failures at field paths, with the message
// formats Kubernetes uses ("spec.replicas: Invalid value: 11: must be ..."), so
// that kubectl prints Converge's validation errors exactly like Kubernetes'.
package field
