// Package shared locates the project's shared corpus (the design docs and the
// conformance CRDs, custom resources and manifests) for tests: the `shared`
// folder beside the repository, as CI lays it out.
package shared

import (
	"os"
	"path/filepath"
)

// Dir returns the shared folder: $CONVERGE_SHARED if set, else ../shared next to
// the repository root (found by walking up to go.mod from the working
// directory), else /work/shared.
func Dir() string {
	if d := os.Getenv("CONVERGE_SHARED"); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && filepath.Base(d) != "bench" {
				if c := filepath.Join(filepath.Dir(d), "shared"); isDir(c) {
					return c
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "/work/shared"
}

// Path joins elements under Dir.
func Path(elem ...string) string { return filepath.Join(append([]string{Dir()}, elem...)...) }

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
