// Package examples checks that the manifests under examples/ — the ones the
// README and docs/ use — parse, pass server-side validation, and do what their
// comments say against a real control plane, so they cannot rot.
package examples
