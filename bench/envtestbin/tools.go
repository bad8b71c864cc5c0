//go:build tools

// Package envtestbin pins the versions of the kube-apiserver and etcd that
// `make envtest-compare` builds for envtest (the comparison of
// bench/compat/envtestsuite). k8s.io/kubernetes requires its staging modules
// at v0.0.0, so they are pinned to v1.34.4's published tags (as in
// conformance/go.mod).
package envtestbin

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
