// Package build builds an operator's main package as a Go plugin that loads
// into a given converge binary: the logic of `converge operator build DIR -o
// NAME.so`.
//
// A plugin loads only when it was built with the host's Go toolchain, build
// flags and exact module versions (see package operators/loader). Build reads
// all three from the host's embedded build info and reproduces them:
//
//   - Toolchain: GOTOOLCHAIN is set to the host's Go version, so the go
//     command uses (or fetches) exactly that release.
//   - Flags: -race, -msan, -asan, -trimpath, -tags, -gcflags, -asmflags,
//     GOEXPERIMENT, GOOS, GOARCH and its level variable (GOAMD64, ...), with
//     CGO_ENABLED=1.
//   - Modules: the build happens in a generated module in a temporary
//     directory whose go.mod requires the operator's module (replaced by its
//     directory) and every module of the host at the host's version, each
//     pinned with a replace directive so minimal version selection cannot
//     raise it. Converge itself is pinned to its released version, or — when
//     the host was built from a source tree (main module version "(devel)") —
//     replaced by that tree (Options.ConvergeSource; see SourceDir). A host
//     built from a source tree with -trimpath needs the tree as a workspace
//     module rather than a replacement (file names are rewritten differently),
//     so then the build runs in a generated go.work that uses both.
//
// The operator's own replace directives (other than converge) are carried
// over with relative paths resolved. An operator needing a newer version of a
// module the host links cannot be built: the error names the module.
//
// Build leaves the operator's directory untouched; the temporary directory is
// removed afterwards.
package build
