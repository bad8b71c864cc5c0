// Package apply holds the behaviour suite of managed fields and server-side
// apply, run against a real in-process control plane over HTTP: the
// managedFields every write records, apply's merge, conflicts, force, the
// client-side apply upgrade, dryRun on every write verb, and JSON patch
// limits. kubectl's own view of them is in internal/e2e/kubectl.
package apply
