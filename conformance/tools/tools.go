//go:build tools

// Package tools records the upstream programs this module builds, so that
// go mod tidy keeps their dependencies: the Kubernetes e2e test package (built
// with go test -c into e2e.test) and the ginkgo CLI that runs it in parallel.
package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/images/agnhost"
)
