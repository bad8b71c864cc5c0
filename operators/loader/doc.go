// Package loader loads operators built as Go plugins (-buildmode=plugin) into
// a running host, refusing incompatible plugins with an actionable error
// instead of Go's raw plugin errors or a crashed host.
//
// # Why the build info check comes first
//
// A plugin only loads when it was built by the same Go toolchain, with the same
// flags (-race, -trimpath, -gcflags, tags, GOARCH/GOAMD64, cgo) and the same
// version and source of every package it shares with the host. plugin.Open
// reports most mismatches as "plugin was built with a different version of
// package X", which names neither the cause nor the fix, and a plugin built by
// another Go minor version crashes the host process outright ("fatal error:
// runtime: no plugin module data"). So Load reads the plugin's build info from
// the file (debug/buildinfo, without loading it) and compares it with the
// host's (debug.ReadBuildInfo) before calling plugin.Open, in this order:
//
//  1. the Go version (exact);
//  2. the build mode (the file must be a plugin) and cgo on both sides;
//  3. build settings: -compiler, -race, -msan, -asan, -trimpath, -tags,
//     -gcflags, -asmflags, GOEXPERIMENT, GOOS, GOARCH and its level variable
//     (GOAMD64, GOARM64, ...). -ldflags are not compared: they only affect the
//     link of the plugin's own main package and never the shared packages;
//  4. every module both use (the host's main module included): the effective
//     path and version after replace directives, and the go.sum hash when both
//     record one.
//
// The first difference is returned as a *MismatchError naming it, both values
// and the command that rebuilds the plugin (`converge operator build DIR -o
// NAME.so`). A remaining mismatch that the build info cannot show (the host's
// own source changed after it was built) is still refused by plugin.Open; that
// error is translated into a MismatchError too.
//
// # Caching and panics
//
// Go never unloads a plugin and loads a path at most once, so Load caches the
// result (operator or error) by absolute path for the life of the process: a
// second Load of the same path returns the first result. A rebuilt plugin at a
// new path with the same package path cannot be loaded next to the old one
// (restart the host). Panics from the plugin's initialisers and from its New
// are recovered; package operators recovers panics from Setup.
//
// Start wires loaded operators into a host's shared manager and reports each
// one's state (see Start and Report).
//
// # Loading without a restart
//
// A Loader (New) does what Start does and then watches the plugin directory
// (Watch, or Watcher as a manager Runnable): a new *.so that is a whole Go
// binary (its build info, at the end of the file, reads), or whose size and
// modification time hold still for one look, is loaded and installed into the
// running manager, and the reports are published again (with an Event for
// the new one). Since plugins cannot be unloaded, a plugin whose main
// package is already loaded, or a loaded file that changes on disk, is
// reported as Failed with a message that a restart is needed; at start, of
// several builds of one main package in the directory only the newest (by
// modification time) is loaded and the others are Superseded. Reports carry
// the plugin's build and the controllers its Setup added, with their
// reconcile counters from the manager's metrics.
package loader
