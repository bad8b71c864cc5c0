// Package kubectl is the kubectl acceptance suite: it drives the real kubectl
// binaries (the Google Cloud SDK dispatcher at /usr/bin/kubectl and the versioned
// kubectl.1.27 and kubectl.1.33 beside it) against an in-process control plane
// and checks what they print and what ends up stored.
//
// The package holds only tests; run them with
//
//	go test ./internal/e2e/kubectl/
//
// The suite fails (it does not skip) when a kubectl binary is missing.
package kubectl
