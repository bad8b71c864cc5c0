#!/usr/bin/env bash
# Installs what the tests need beyond Go, from Debian packages:
#   containerd, runc          builtin/node/cri/containerd, builtin/node/image
#   chromium                  the dashboard's browser suite (internal/e2e/dashboard)
#   containernetworking-plugins (and iptables)
#                             CNI pod networking of containerd pods
#   docker-registry, skopeo   a real registry on loopback for image pulls
#   busybox-static            a busybox image built by `converge image build`
#   bash-static               the conformance agnhost image's /bin/sh (hack/conformance.sh says why)
#   apache2-bin               the conformance httpd images' server
#   nginx-light               the conformance nginx images' server
#   bind9-dnsutils            dig, nslookup and host in the conformance agnhost and jessie-dnsutils images
#   gcc, libc6-dev, make, patch conformance/build.sh's static busybox (conformance images)
# Idempotent; silent when everything is present or was installed; prints the
# apt output and exits non-zero on failure.
set -euo pipefail

# what must be present → the package that provides it
declare -A want=(
	[containerd]=containerd
	[containerd-shim-runc-v2]=containerd
	[runc]=runc
	[chromium]=chromium
	[/usr/lib/cni/bridge]=containernetworking-plugins
	[/usr/lib/cni/host-local]=containernetworking-plugins
	[/usr/lib/cni/portmap]=containernetworking-plugins
	[/usr/lib/cni/loopback]=containernetworking-plugins
	[iptables]=iptables
	[docker-registry]=docker-registry
	[skopeo]=skopeo
	[/bin/busybox]=busybox-static
	[/bin/bash-static]=bash-static
	[/usr/sbin/apache2]=apache2-bin
	[/usr/sbin/nginx]=nginx-light
	[/usr/bin/dig]=bind9-dnsutils
	[/usr/bin/nslookup]=bind9-dnsutils
	[/usr/bin/host]=bind9-dnsutils
	[gcc]=gcc
	[/usr/include/netinet]=libc6-dev
	[make]=make
	[patch]=patch
)

present() {
	case "$1" in
	/*) [ -x "$1" ] ;;
	*) command -v "$1" >/dev/null 2>&1 ;;
	esac
}

missing=()
declare -A pkgs=()
for what in "${!want[@]}"; do
	if ! present "$what"; then
		missing+=("$what")
		pkgs[${want[$what]}]=1
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
packages=("${!pkgs[@]}")

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ci-deps: missing ${missing[*]} and no apt-get: install ${packages[*]} yourself (containerd >= 1.6)" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "ci-deps: missing ${missing[*]}; run as root: apt-get install -y ${packages[*]}" >&2
		exit 1
	fi
	sudo=(sudo -n)
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
	echo "ci-deps: installing ${packages[*]} failed (missing: ${missing[*]}):" >&2
	cat "$log" >&2
	exit 1
fi
for what in "${missing[@]}"; do
	if ! present "$what"; then
		echo "ci-deps: $what is still missing after apt-get install ${packages[*]}:" >&2
		cat "$log" >&2
		exit 1
	fi
done
