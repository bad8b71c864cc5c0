// Package e2e holds the end-to-end tests of the CRD registry: the conformance
// corpus (CRDs, CRs and invalid variants) against an in-process control plane.
package e2e
