#!/usr/bin/env bash
# Usage: hack/bench-against-commit.sh [COMMIT] [go test flags...]
#
# Builds converge (./cmd/converge) at COMMIT (default bbe7e82^, the commit
# before managedFields: issue 23's "today's commit") in a temporary git
# worktree under $TMPDIR, removed afterwards, and at the working tree, then
# runs bench/commits' BenchmarkCreatesAgainstCommit with both binaries
# (CONVERGE_OLD, CONVERGE_NEW): creates/s of each as `converge apiserver` in
# the default secure mode, the ratio new ÷ old and each server's CPU per
# create. Extra arguments go to `go test` (default: -benchtime 40000x).
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:-bbe7e82^}
shift || true
[ $# -gt 0 ] || set -- -benchtime 40000x
rev=$(git rev-parse --verify "$commit^{commit}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-against-commit.XXXXXX")
src="$tmp/src"
cleanup() {
  git worktree remove --force "$src" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
git worktree add --quiet --detach "$src" "$rev"
echo "== building converge at $commit ($rev)" >&2
(cd "$src" && go build -o "$tmp/converge-old" ./cmd/converge)
echo "== building converge at the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with changes'))" >&2
go build -o "$tmp/converge-new" ./cmd/converge
echo "== $(uptime)" >&2
cd bench
CONVERGE_OLD="$tmp/converge-old" CONVERGE_NEW="$tmp/converge-new" \
  go test -run '^$' -bench '^BenchmarkCreatesAgainstCommit$' -timeout 30m "$@" ./commits/
echo "== $(uptime)" >&2
