// Package operator holds the end-to-end suite of the operator story with the
// real converge binary (issue #8's acceptance):
//
//   - the PostgreSQL operator (with real PostgreSQL 15) and an operator
//     freshly scaffolded by `converge operator init` are each built with
//     `converge operator build`, loaded into one `converge up --operator ...`
//     process, and reconcile their custom resources;
//   - the greeting sample operator runs standalone against that converge up
//     with `converge operator run` (operators/run runs it against testenv,
//     operators/loader as a plugin);
//   - plugins built with a different dependency version, a different -race
//     setting or another Go toolchain (a plugin whose build info is forged to
//     say go1.25) and a file that is no plugin at all are refused with the
//     loader's message naming the difference and the rebuild command, while
//     `converge up` keeps serving.
//
// The suite needs root (the process runtime runs postgres as uid 101), the
// PostgreSQL 15 server binaries in /usr/lib/postgresql/15/bin, psql on PATH,
// a cgo toolchain and github.com/google/uuid v1.5.0 in the module cache.
package operator
