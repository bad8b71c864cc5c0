#!/usr/bin/env bash
# Builds the upstream Kubernetes e2e test binary (e2e.test), the ginkgo CLI and
# the e2e image programs agnhost, nonewprivs' nnp, sample-apiserver and etcd
# (static, for RUNTIME=containerd's images) from
# this module's pinned versions, into a cache directory keyed by the hash of
# go.mod, go.sum and the Go version, so a rerun with the same pins skips the
# build. Prints the directory holding the binaries on its last line.
#
# With BUSYBOX=1 it also builds a static busybox for those images (see
# build_busybox below; needs apt-get, gcc, make and patch), cached apart from the
# Go binaries, and links it into that directory.
#
# CONFORMANCE_CACHE overrides the cache root (default: conformance/.cache).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
GO=${GO:-go}
root=${CONFORMANCE_CACHE:-$here/.cache}
key=$( { cat go.mod go.sum; $GO version; } | sha256sum | cut -c1-16)
dir=$root/$key

# build_busybox builds Debian's busybox (the machine's release, from its source
# package) as upstream's: without Debian's revert of upstream commit
# 9c143ce52 ("ash: retain envvars with bad names in initial environment").
# Debian's ash drops environment entries whose names are not shell
# identifiers (data-1, from a ConfigMap key through envFrom), so `sh -c env`
# cannot show what the node passed; upstream's busybox 1.37.0 image, which
# the specs are written against, keeps them. Its ash also words errors as the
# specs expect ("/bin/sh: can't create /file: Read-only file system").
build_busybox() {
	local bb=$root/busybox
	[[ -x $bb/busybox ]] && return
	for t in apt-get gcc make patch; do
		command -v $t >/dev/null || { echo "conformance: $t is missing (busybox build): run hack/ci-deps.sh" >&2; return 1; }
	done
	echo "conformance: building busybox into $bb (a few minutes)" >&2
	rm -rf "$bb.tmp"
	mkdir -p "$bb.tmp/apt/lists/partial" "$bb.tmp/cache/archives/partial" "$bb.tmp/src"
	# The source package through apt with a private source list and state,
	# so the machine's apt configuration stays as it is.
	. /etc/os-release
	# The source of the machine's own Debian archive: its deb entries for this
	# release (one-line lists and deb822 .sources alike) as deb-src.
	{
		awk -v c="$VERSION_CODENAME" '$1 == "deb" && $3 == c { $1 = "deb-src"; print }' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
		local f
		for f in /etc/apt/sources.list.d/*.sources; do
			[[ -f $f ]] || continue
			awk -v c="$VERSION_CODENAME" '
				function flush() { if (deb && suite && uris != "") for (i = 1; i <= n; i++) print "deb-src " u[i] " " c " main"; deb = suite = 0; uris = "" }
				/^[ \t]*$/ { flush(); next }
				/^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
				/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) suite = 1 }
				/^URIs:/ { uris = $0; n = 0; for (i = 2; i <= NF; i++) u[++n] = $i }
				END { flush() }' "$f"
		done
	} | sort -u >"$bb.tmp/sources.list"
	[[ -s $bb.tmp/sources.list ]] || { echo "conformance: no Debian $VERSION_CODENAME archive in the machine's apt sources (busybox build)" >&2; return 1; }
	local apt=(-o Dir::Etc::SourceList="$bb.tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State="$bb.tmp/apt" -o Dir::Cache="$bb.tmp/cache" -o Dir::State::status=/var/lib/dpkg/status
		-o APT::Sandbox::User=root)
	apt-get "${apt[@]}" -qq update >&2
	(cd "$bb.tmp/src" && apt-get "${apt[@]}" -qq source --download-only busybox >&2)
	local src=$bb.tmp/src/busybox
	mkdir -p "$src"
	tar -xf "$bb.tmp"/src/busybox_*.orig.tar.* -C "$src" --strip-components=1
	tar -xf "$bb.tmp"/src/busybox_*.debian.tar.* -C "$src"
	local p
	for p in $(grep -v '^#' "$src/debian/patches/series"); do
		case $p in
		# The revert, and Debian's installer hack that builds on it.
		revert-9c143ce52*|temp-deb-installer-hack*) continue ;;
		esac
		patch -d "$src" -p1 -s <"$src/debian/patches/$p" >&2
	done
	# Debian's static configuration, less the installer hack's option.
	grep -v FEATURE_DI_ENV_HACK "$src/debian/config/pkg/static" >"$src/.config"
	if ! (cd "$src" && { yes '' || true; } | make oldconfig && make -j"$(nproc)" busybox) >"$bb.tmp/build.log" 2>&1; then
		tail -30 "$bb.tmp/build.log" >&2
		echo "conformance: busybox build failed (log: $bb.tmp/build.log)" >&2
		return 1
	fi
	"$src/busybox" true
	mv "$src/busybox" "$bb.tmp/busybox"
	rm -rf "$bb.tmp/src" "$bb.tmp/apt" "$bb.tmp/cache" "$bb"
	mv "$bb.tmp" "$bb"
}

if [[ ${BUSYBOX:-} == 1 ]]; then
	build_busybox
	mkdir -p "$dir"
	ln -sf "$root/busybox/busybox" "$dir/busybox"
fi

if [[ -x $dir/e2e.test && -x $dir/ginkgo && -x $dir/agnhost && -x $dir/nnp && -x $dir/sample-apiserver && -x $dir/etcd ]]; then
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
# nonewprivs' nnp prints its effective uid; the image makes it setuid root.
if [[ ! -x $dir/nnp ]]; then
	echo "conformance: building nonewprivs' nnp into $dir" >&2
	CGO_ENABLED=0 $GO build -trimpath -o "$dir/nnp.tmp" k8s.io/kubernetes/test/images/nonewprivs
	mv "$dir/nnp.tmp" "$dir/nnp"
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
