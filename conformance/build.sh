#!/usr/bin/env bash
# Builds the upstream Kubernetes e2e test binary (e2e.test), the ginkgo CLI and
# the e2e image program agnhost (static, for RUNTIME=containerd's images) from
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

if [[ -x $dir/e2e.test && -x $dir/ginkgo && -x $dir/agnhost ]]; then
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
echo "conformance: building agnhost into $dir" >&2
CGO_ENABLED=0 $GO build -trimpath -o "$dir/agnhost.tmp" k8s.io/kubernetes/test/images/agnhost
mv "$dir/agnhost.tmp" "$dir/agnhost"
echo "conformance: built in $(( $(date +%s) - start ))s" >&2
echo "$dir"
