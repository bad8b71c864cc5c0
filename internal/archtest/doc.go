// Package archtest holds the test that enforces the dependency direction of
// DESIGN.md §1: framework knows no concrete kind, the client side never links the
// server, and nothing imports Kubernetes' own modules.
package archtest
