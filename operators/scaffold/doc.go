// Package scaffold writes a new operator module: the logic of `converge
// operator init NAME --group G --version V --kind K`.
//
// The module (see Init for the file list) builds and passes its own tests
// right after init: its go.mod requires Converge (replaced by the source tree
// when Options.ConvergeSource is set, as for a converge built from source)
// and the test libraries at Converge's versions, and its go.sum starts as
// Converge's. The types carry kubebuilder markers and the CRD YAML next to
// them is what `make manifests` (converge operator generate) writes from
// them; a test in the generated module (api/<version>/crd_test.go) fails
// when the two disagree.
package scaffold
