// Package standalone holds the end-to-end test of the PostgreSQL operator run
// standalone: its own process (the main package in ../plugin, which calls
// run.Main) against a control plane given by a kubeconfig, as
// `converge operator run ./operators/postgres/plugin` runs it. The package
// has no code of its own.
package standalone
