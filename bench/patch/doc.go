// Package patch benchmarks framework/patch against
// gopkg.in/evanphx/json-patch.v4, the library the Kubernetes API server applies
// JSON patches and merge patches with. The agreement between the two is
// checked in bench/compat/patch.
package patch
