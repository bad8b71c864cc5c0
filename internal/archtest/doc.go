// Package archtest holds the tests that enforce the dependency direction of
// DESIGN.md §1 (framework ← crd ← builtin ← controlplane ← cmd, testenv;
// operators on framework and builtin/api): framework knows no concrete kind,
// the client side never links the server, builtin/ never imports operators/,
// only controlplane/ assembles the components (and the split commands run the
// controller set `converge up` runs), and nothing imports Kubernetes' own
// modules.
package archtest
