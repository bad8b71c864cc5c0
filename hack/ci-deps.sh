#!/usr/bin/env bash
# Installs what the tests need beyond Go: containerd and runc (Debian packages),
# for builtin/node/cri/containerd and builtin/node/image; chromium for the
# dashboard's browser suite (internal/e2e/dashboard). Idempotent; silent
# when everything is present or was installed; prints the apt output and exits
# non-zero on failure.
set -euo pipefail

missing=()
for bin in containerd containerd-shim-runc-v2 runc chromium; do
	command -v "$bin" >/dev/null 2>&1 || missing+=("$bin")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ci-deps: missing ${missing[*]} and no apt-get: install containerd and runc (containerd >= 1.6) and chromium yourself" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "ci-deps: missing ${missing[*]}; run as root: apt-get install -y containerd runc chromium" >&2
		exit 1
	fi
	sudo=(sudo -n)
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends containerd runc chromium; } >"$log" 2>&1; then
	echo "ci-deps: installing containerd, runc and chromium failed (missing: ${missing[*]}):" >&2
	cat "$log" >&2
	exit 1
fi
for bin in containerd containerd-shim-runc-v2 runc chromium; do
	if ! command -v "$bin" >/dev/null 2>&1; then
		echo "ci-deps: $bin is still missing after apt-get install containerd runc chromium:" >&2
		cat "$log" >&2
		exit 1
	fi
done
