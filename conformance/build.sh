#!/usr/bin/env bash
# Builds the upstream Kubernetes e2e test binary (e2e.test), the ginkgo CLI and
# the e2e image programs agnhost, sample-apiserver and etcd (static, for
# RUNTIME=containerd's images) from
# this module's pinned versions, into a cache directory keyed by the hash of
# go.mod, go.sum and the Go version, so a rerun with the same pins skips the
# build. Prints the directory holding the binaries on its last line.
#
# CONFORMANCE_CACHE overrides the cache root (default: conformance/.cache).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
GO=${GO:-go}
root=${CONFORMANCE_CACHE:-$here/.cache}
key=$( { cat go.mod go.sum; $GO version; } | sha256sum | cut -c1-16)
dir=$root/$key

if [[ -x $dir/e2e.test && -x $dir/ginkgo && -x $dir/agnhost && -x $dir/sample-apiserver && -x $dir/etcd ]]; then
	echo "conformance: cached binaries in $dir" >&2
	echo "$dir"
	exit 0
fi

mkdir -p "$dir"
start=$(date +%s)
if [[ ! -x $dir/e2e.test || ! -x $dir/ginkgo ]]; then
	echo "conformance: building ginkgo and e2e.test into $dir (cold: many minutes)" >&2
	$GO build -o "$dir/ginkgo.tmp" github.com/onsi/ginkgo/v2/ginkgo
	# -vet=off: upstream code, not ours to lint; vet would only slow the build.
	$GO test -c -vet=off -o "$dir/e2e.test.tmp" k8s.io/kubernetes/test/e2e
	mv "$dir/ginkgo.tmp" "$dir/ginkgo"
	mv "$dir/e2e.test.tmp" "$dir/e2e.test"
fi
# agnhost runs inside containers (RUNTIME=containerd): static, as upstream's image.
if [[ ! -x $dir/agnhost ]]; then
	echo "conformance: building agnhost into $dir" >&2
	CGO_ENABLED=0 $GO build -trimpath -o "$dir/agnhost.tmp" k8s.io/kubernetes/test/images/agnhost
	mv "$dir/agnhost.tmp" "$dir/agnhost"
fi
# The Aggregator spec's images: sample-apiserver (k8s.io/sample-apiserver, this
# module's replace) and etcd (go.etcd.io/etcd/server/v3's main), static. They
# are built with a copy of go.mod that requires them (-modfile), so go.mod,
# and with it the cache key and e2e.test, stay as they are.
if [[ ! -x $dir/sample-apiserver || ! -x $dir/etcd ]]; then
	echo "conformance: building sample-apiserver and etcd into $dir" >&2
	cp go.mod "$dir/images.mod"
	cp go.sum "$dir/images.sum"
	printf 'require (\n\tk8s.io/sample-apiserver v0.34.4\n\tgo.etcd.io/etcd/server/v3 v3.6.4\n)\n' >>"$dir/images.mod"
	CGO_ENABLED=0 GOFLAGS=-mod=mod $GO build -modfile="$dir/images.mod" -trimpath -o "$dir/sample-apiserver.tmp" k8s.io/sample-apiserver
	CGO_ENABLED=0 GOFLAGS=-mod=mod $GO build -modfile="$dir/images.mod" -trimpath -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3
	mv "$dir/sample-apiserver.tmp" "$dir/sample-apiserver"
	mv "$dir/etcd.tmp" "$dir/etcd"
fi
echo "conformance: built in $(( $(date +%s) - start ))s" >&2
echo "$dir"
