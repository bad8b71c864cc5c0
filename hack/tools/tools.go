//go:build tools

// Package tools records programs the main module's tests build from their
// own module, so that their dependencies stay out of the main go.mod:
// h2spec, the HTTP/2 conformance tester (framework/apiserver/h2serve's
// TestH2Spec builds it with go build -C hack/tools).
package tools

import (
	_ "github.com/summerwind/h2spec/cmd/h2spec"
)
