#!/usr/bin/env bash
# Runs the upstream Kubernetes conformance specs against a default
# `converge up` and writes docs/CONFORMANCE.md (see `make conformance`).
#
#   1. builds e2e.test and ginkgo from the conformance module (cached by its
#      go.sum, see conformance/build.sh) and bin/converge;
#   2. starts `converge up` (HTTPS, RBAC, embedded etcd, local node on
#      RUNTIME) in a temporary data dir on a free port;
#   3. runs the focused specs in parallel with ginkgo, within TIMEOUT;
#   4. stops converge and writes the report from the JUnit XML.
#
# Environment (defaults in brackets):
#   FOCUS    ginkgo --focus          ['\[Conformance\]']
#   SKIP     ginkgo --skip           ['']
#   PROCS    ginkgo --procs          [4: the specs mostly wait]
#   TIMEOUT  whole suite, in minutes   [45]
#   POD_CIDR converge up --pod-cidr  [10.44.0.0/16 on containerd,
#            127.77.0.0/16 on process: not the default, so pods of another
#            converge on this machine never share an address]
#   SERVICE_CIDR converge up --service-cidr [10.45.0.0/16 on containerd, the
#            default on process; set it, like POD_CIDR, so two runs on one
#            machine never share Service IPs]
#   NODE_NAME converge up --node-name [the hostname; with RUNTIME=containerd
#            give each concurrent run its own: the pod bridge is named after it]
#   REPORT   Markdown output          [docs/CONFORMANCE.md]
#   NOTE     extra paragraph for the report header
#   RUNTIME  the node's runtime: containerd, or process [containerd]. With
#            containerd the run starts a local registry (docker-registry) and
#            serves the upstream images the specs ask for under their upstream
#            names through a registries.yaml mirror of registry.k8s.io, each
#            packed by `converge image build`: agnhost (built from the
#            conformance module, with conformance/cmd/curl and cmd/nc for
#            Alpine's curl and netcat, /bin/sh Debian's bash-static, Debian's
#            dig, nslookup, host and getent for Alpine's), kitten and
#            nautilus 1.7 (that agnhost with their html/ files, CMD
#            test-webserver), jessie-dnsutils 1.7 (Debian's dig, nslookup,
#            host and getent with their libraries on the built busybox), busybox
#            (a static busybox, built by conformance/build.sh as upstream's:
#            its applets linked in /bin, sh its ash), httpd 2.4.38-4 and
#            2.4.39-4 (Debian's Apache httpd with the libraries it loads, the
#            configuration in conformance/images/httpd, the default command
#            httpd-foreground), nginx 1.14-4 and 1.15-4 (Debian's nginx, the
#            configuration in conformance/images/nginx), nonewprivs (its nnp,
#            setuid root), pause
#            (conformance/cmd/pause) and the Aggregator spec's
#            sample-apiserver and etcd. Any other image fails to pull, and the
#            report counts its specs as cannot run here.
# The run's logs and JUnit XML stay in conformance/.cache/runs/<time>/.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
GO=${GO:-go}
FOCUS=${FOCUS:-'\[Conformance\]'}
SKIP=${SKIP:-}
PROCS=${PROCS:-4}
TIMEOUT=${TIMEOUT:-45}
RUNTIME=${RUNTIME:-containerd}
case $RUNTIME in
process)
	POD_CIDR=${POD_CIDR:-127.77.0.0/16}
	SERVICE_CIDR=${SERVICE_CIDR:-}
	;;
containerd)
	POD_CIDR=${POD_CIDR:-10.44.0.0/16}
	SERVICE_CIDR=${SERVICE_CIDR:-10.45.0.0/16}
	;;
*) echo "conformance: RUNTIME=$RUNTIME: want process or containerd" >&2; exit 2 ;;
esac
REPORT=${REPORT:-docs/CONFORMANCE.md}
NOTE=${NOTE:-}

log() { echo "conformance: $*" >&2; }

# The images' busybox only for containerd: it is built from source.
bins=$(BUSYBOX=$([[ $RUNTIME == containerd ]] && echo 1 || true) ./conformance/build.sh | tail -1)
$GO build -o bin/converge ./cmd/converge

run=$repo/conformance/.cache/runs/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$run"
# Short: containerd's socket lands under it and must fit in a sockaddr.
data=$(mktemp -d /tmp/cvconf.XXXXXX)
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(freeport)
kubeconfig=$data/kubeconfig

runtime_args=()
registry_pid=
served=
if [[ $RUNTIME == containerd ]]; then
	# The images' registry: Debian's docker-registry on loopback (plain HTTP).
	command -v docker-registry >/dev/null || { log "docker-registry is missing: run hack/ci-deps.sh"; exit 1; }
	registry=127.0.0.1:$(freeport)
	mkdir -p "$data/registry"
	cat >"$data/registry/config.yml" <<EOF
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $data/registry/data}, delete: {enabled: true}}
http: {addr: $registry}
EOF
	docker-registry serve "$data/registry/config.yml" >"$run/registry.log" 2>&1 &
	registry_pid=$!
	cat >"$data/registries.yaml" <<EOF
mirrors:
  registry.k8s.io:
    endpoint: ["http://$registry"]
EOF
	(cd conformance && CGO_ENABLED=0 $GO build -o "$data/pause" ./cmd/pause && CGO_ENABLED=0 $GO build -o "$data/curl" ./cmd/curl &&
		CGO_ENABLED=0 $GO build -o "$data/nc" ./cmd/nc)
	runtime_args=(--runtime containerd --registries "$data/registries.yaml")
fi

log "converge up --runtime $RUNTIME --data-dir $data --port $port (log: $run/converge.log)"
./bin/converge up --data-dir "$data" --port "$port" --pod-cidr "$POD_CIDR" "${runtime_args[@]}" \
	${SERVICE_CIDR:+--service-cidr "$SERVICE_CIDR"} ${NODE_NAME:+--node-name "$NODE_NAME"} >"$run/converge.log" 2>&1 &
converge_pid=$!
stop() {
	if kill -0 "$converge_pid" 2>/dev/null; then
		if [[ -n $registry_pid ]]; then
			# Pods first, so the node tears their networks down (a stopped
			# node keeps them for its restart, and this data dir goes away).
			kubectl --kubeconfig "$kubeconfig" delete pods --all -A --wait --timeout=90s >/dev/null 2>&1 || true
		fi
		kill -TERM "$converge_pid" 2>/dev/null || true
		for _ in $(seq 90); do kill -0 "$converge_pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$converge_pid" 2>/dev/null || true
	fi
	wait "$converge_pid" 2>/dev/null || true
	if [[ -n $registry_pid ]]; then
		kill -TERM "$registry_pid" 2>/dev/null || true
		wait "$registry_pid" 2>/dev/null || true
		reap_containerd "$data"
	fi
	rm -rf "$data"
}
# reap_containerd removes what a containerd node can leave behind under dir
# once converge up has exited: shims of containers it kept for a restart, with
# their processes, and pod network namespaces still mounted there. The node's
# bridge and masquerade rule stay, as after any `converge up` on containerd
# (the next one on this host reuses them).
reap_containerd() {
	local dir=$1 p shim m
	for p in /proc/[0-9]*; do
		grep -qa containerd-shim "$p/cmdline" 2>/dev/null && grep -qaF "$dir" "$p/cmdline" 2>/dev/null || continue
		shim=${p#/proc/}
		pkill -KILL -P "$shim" 2>/dev/null || true
		kill -KILL "$shim" 2>/dev/null || true
		log "reaped leftover containerd shim $shim"
	done
	awk -v d="$dir/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
	# This run's masquerade jump (its pod CIDR), then the node's chain once
	# nothing jumps to it.
	local rule chain
	iptables -t nat -S POSTROUTING | grep -F -- "-s $POD_CIDR " | grep -- '-j CNV-MASQ-' | while read -r rule; do
		eval "iptables -t nat ${rule/-A /-D }" || true
	done
	for chain in $(iptables -t nat -S | awk '$1 == "-N" && $2 ~ /^CNV-MASQ-/ {print $2}'); do
		iptables -t nat -S POSTROUTING | grep -q -- "-j $chain\$" && continue
		iptables -t nat -F "$chain" && iptables -t nat -X "$chain" || true
	done
	# The node's bridge carries this run's gateway: another pod CIDR on a
	# later node of this host's name could not use it (the bridge plugin
	# refuses a second address). Only an empty one goes.
	local gw br
	gw=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_network(sys.argv[1], strict=False)[1])' "$POD_CIDR")
	for br in $(ip -br -4 addr | awk -v g="$gw/" '$1 ~ /^cnv-/ && index($0, g) {print $1}'); do
		if [[ -z $(ip -br link show master "$br") ]]; then
			ip link del "$br" && log "removed the run's bridge $br"
		else
			log "the run's bridge $br still has ports: left in place"
		fi
	done
	return 0
}
trap stop EXIT

for i in $(seq 240); do
	grep -q 'is ready at' "$run/converge.log" && break
	kill -0 "$converge_pid" 2>/dev/null || { tail -20 "$run/converge.log" >&2; log "converge up exited"; exit 1; }
	[[ $i == 240 ]] && { tail -20 "$run/converge.log" >&2; log "converge up not ready after 120s"; exit 1; }
	sleep 0.5
done
export KUBECONFIG=$kubeconfig
# The node registers a moment after the API server is ready; the suite wants
# every node Ready before it starts.
for _ in $(seq 240); do [[ -n $(kubectl get nodes -o name 2>/dev/null) ]] && break; sleep 0.5; done
kubectl wait --for=condition=Ready node --all --timeout=120s >&2

# The suite needs the default/kubernetes Service; the API server keeps it
# (builtin/apiendpoints). Fail loudly if it is missing rather than faking it.
for _ in $(seq 60); do kubectl get service kubernetes -n default >/dev/null 2>&1 && break; sleep 0.5; done
kubectl get service kubernetes -n default >&2 || { log "default/kubernetes Service missing: the API server did not create it"; exit 1; }

if [[ -n $registry_pid ]]; then
	# The images the specs ask for, under their upstream names in the local
	# registry; the node pulls them through its registry.k8s.io mirror.
	sock=$data/node/containerd/containerd.sock
	# agnhost's /bin/sh is Debian's bash-static (see that image below);
	# busybox provides the other applets (nslookup is Debian's, below). The
	# other images' busybox is conformance/build.sh's (upstream's ash, see
	# there).
	command -v bash-static >/dev/null || { log "bash-static is missing: run hack/ci-deps.sh"; exit 1; }
	busybox_sh_links=()
	for a in $(/bin/busybox --list); do [[ $a == busybox || $a == sh || $a == nslookup ]] || busybox_sh_links+=(--link "/bin/$a=busybox"); done
	# applet_links [SKIP...]: every applet of the built busybox linked in /bin.
	applet_links() {
		local a
		for a in $("$bins/busybox" --list); do
			[[ $a == busybox || " $* " == *" $a "* ]] || echo "--link=/bin/$a=busybox"
		done
	}
	# lib_files ELF...: the shared libraries they load, as --file flags at
	# their host paths (the dynamic loader included).
	lib_files() {
		ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && NF > 1 {print $1}' | sort -u |
			while read -r l; do echo "--file=$l=$l"; done
	}
	# Every image pushed is one the report counts as served: a failed pull of
	# another is an image the run cannot get (the machine reaches no other
	# registry).
	build_push() { # NAME TAG FLAGS...: build, push to the registry, drop the node's copies
		local name=$1 tag=$2
		shift 2
		served+=${served:+,}registry.k8s.io/$name:$tag
		./bin/converge image build --name "registry.k8s.io/$name:$tag" --import --address "$sock" "$@" >&2
		./bin/converge image push "registry.k8s.io/$name:$tag" "$registry/$name:$tag" --address "$sock" >&2
		./bin/converge image rm "registry.k8s.io/$name:$tag" --address "$sock" >&2
		./bin/converge image rm "$registry/$name:$tag" --address "$sock" >/dev/null 2>&1 || true
	}
	# Upstream agnhost: ENTRYPOINT ["/agnhost"], CMD ["pause"], /agnhost-2 a
	# link to it (entrypoint specs), on Alpine: specs exec cat, sh, ... in
	# it, so busybox and its applets stand in for Alpine's userland.
	# Its porter serves its TLS ports with /localhost.crt and /localhost.key,
	# which upstream's image carries from test/images/agnhost/porter; specs
	# exec curl and netcat in it (Alpine's; here conformance/cmd/curl's and
	# cmd/nc's subsets, in /usr/bin ahead of busybox's nc, which has no -u).
	# Its /bin/sh is bash-static: busybox ash (Debian's or ours) runs its own
	# applets (nc) whatever PATH says.
	# The DNS specs' probes run `dig +search ...` and `getent hosts NAME` in
	# agnhost (upstream: Alpine's bind-tools and musl's getent) and in
	# jessie-dnsutils (Debian's dnsutils and glibc's getent). Both get
	# Debian's bind9-dnsutils dig, nslookup and host and libc-bin's getent,
	# with the libraries they load; glibc's files and dns NSS modules are in
	# libc.so.6, conformance/images/dnsutils/nsswitch.conf orders them.
	for t in dig nslookup host getent; do
		[[ -x /usr/bin/$t ]] || { log "/usr/bin/$t is missing: run hack/ci-deps.sh"; exit 1; }
	done
	dnsutils=(--file conformance/images/dnsutils/nsswitch.conf=/etc/nsswitch.conf)
	for t in dig nslookup host getent; do dnsutils+=(--file "/usr/bin/$t=/usr/bin/$t"); done
	mapfile -t -O "${#dnsutils[@]}" dnsutils < <(lib_files /usr/bin/{dig,nslookup,host,getent})
	e2eimages=$(cd conformance && $GO list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images
	agnhost=(--binary "$bins/agnhost" --path /agnhost --link /agnhost-2=agnhost --file /bin/busybox=/bin/busybox
		"${busybox_sh_links[@]}" --file /bin/bash-static=/bin/sh
		--file "$e2eimages/agnhost/porter/localhost.crt=/localhost.crt" --file "$e2eimages/agnhost/porter/localhost.key=/localhost.key"
		--file "$data/curl=/usr/bin/curl" --file "$data/nc=/usr/bin/nc" "${dnsutils[@]}")
	build_push e2e-test-images/agnhost 2.56 "${agnhost[@]}" --cmd pause
	# Upstream kitten and nautilus (kubectl's Update Demo): FROM agnhost,
	# their html/ (a picture and data.json naming it) copied to /, CMD
	# ["test-webserver"] (agnhost's, serving / on port 80).
	for demo in kitten nautilus; do
		build_push e2e-test-images/$demo 1.7 "${agnhost[@]}" --cmd test-webserver \
			--file "$e2eimages/$demo/html/$demo.jpg=/$demo.jpg" --file "$e2eimages/$demo/html/data.json=/data.json"
	done
	# Upstream jessie-dnsutils: Debian jessie with dnsutils, no entrypoint
	# (the specs run `sh -c PROBE`). Here the dnsutils above on the built
	# busybox, its applets (seq, sleep, test, echo, hostname, ...) in /bin
	# and sh its ash; busybox's nslookup applet is left to Debian's.
	mapfile -t links < <(applet_links nslookup)
	build_push e2e-test-images/jessie-dnsutils 1.7 --binary "$bins/busybox" --path /bin/busybox --entrypoint "" --cmd sh \
		"${links[@]}" "${dnsutils[@]}"
	# Upstream busybox: no entrypoint, CMD ["sh"], the applets linked in /bin,
	# sh among them (specs expect ash's wording of errors, and that its
	# `sh -c env` shows envFrom names like data-1 that are not identifiers).
	mapfile -t links < <(applet_links)
	build_push e2e-test-images/busybox 1.37.0-1 --binary "$bins/busybox" --path /bin/busybox --entrypoint "" --cmd sh "${links[@]}"
	# Upstream httpd (2.4.38-alpine, and 2.4.39 for the rollover specs): no
	# entrypoint, CMD ["httpd-foreground"], /usr/local/apache2 holding the
	# server, its modules, conf/ and htdocs/index.html ("It works!"); specs
	# exec sh and mv in it (busybox's). Here Debian's Apache httpd
	# (apache2-bin) with the modules httpd.conf loads and every library
	# they need (libgcc_s: glibc loads it for thread exits), its users in
	# /etc/passwd (it serves as daemon). busybox's httpd applet is left out.
	command -v apache2 >/dev/null || [[ -x /usr/sbin/apache2 ]] || { log "apache2 is missing: run hack/ci-deps.sh"; exit 1; }
	mods=/usr/lib/apache2/modules
	httpd=(--file /usr/sbin/apache2=/usr/local/apache2/bin/httpd --link /usr/local/bin/httpd=/usr/local/apache2/bin/httpd)
	for m in mpm_event authz_core mime dir; do httpd+=(--file "$mods/mod_$m.so=/usr/local/apache2/modules/mod_$m.so"); done
	mapfile -t -O "${#httpd[@]}" httpd < <(lib_files /usr/sbin/apache2 "$mods"/mod_{mpm_event,authz_core,mime,dir}.so; applet_links httpd)
	libgcc=$(ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ {print $NF; exit}')
	img=conformance/images/httpd
	httpd+=(--file "$libgcc=$libgcc" --file "$img/httpd.conf=/usr/local/apache2/conf/httpd.conf"
		--file "$img/mime.types=/usr/local/apache2/conf/mime.types"
		--file "$img/index.html=/usr/local/apache2/htdocs/index.html"
		--file "$img/httpd-foreground=/usr/local/bin/httpd-foreground"
		--file "$img/passwd=/etc/passwd" --file "$img/group=/etc/group")
	for tag in 2.4.38-4 2.4.39-4; do
		build_push e2e-test-images/httpd $tag --binary "$bins/busybox" --path /bin/busybox --entrypoint "" \
			--cmd httpd-foreground "${httpd[@]}"
	done
	# Upstream nginx (1.14-alpine, and 1.15 for the specs that update it): no
	# entrypoint, CMD ["nginx", "-g", "daemon off;"], the default page in
	# /usr/share/nginx/html. Here Debian's nginx (nginx-light) with its
	# libraries, conformance/images/nginx's configuration, on busybox.
	[[ -x /usr/sbin/nginx ]] || { log "nginx is missing: run hack/ci-deps.sh"; exit 1; }
	img=conformance/images/nginx
	nginx=(--file /usr/sbin/nginx=/usr/sbin/nginx --file "$libgcc=$libgcc" --file "$img/nginx.conf=/etc/nginx/nginx.conf"
		--file "$img/index.html=/usr/share/nginx/html/index.html" --file "$img/passwd=/etc/passwd" --file "$img/group=/etc/group")
	mapfile -t -O "${#nginx[@]}" nginx < <(lib_files /usr/sbin/nginx; applet_links)
	for tag in 1.14-4 1.15-4; do
		build_push e2e-test-images/nginx $tag --binary "$bins/busybox" --path /bin/busybox --entrypoint "" \
			--cmd nginx --cmd -g --cmd "daemon off;" "${nginx[@]}"
	done
	# Upstream nonewprivs: /usr/local/bin/nnp owned by root, chmod +s (as
	# its Dockerfile), CMD ["nnp"] on Alpine.
	install -m 6755 "$bins/nnp" "$data/nnp"
	build_push e2e-test-images/nonewprivs 1.3 --binary "$data/nnp" --path /usr/local/bin/nnp --entrypoint "" --cmd nnp
	build_push pause 3.10.1 --binary "$data/pause" --path /pause
	# The Aggregator spec's: upstream sample-apiserver has ENTRYPOINT
	# ["/sample-apiserver"]; its pod runs etcd as /usr/local/bin/etcd.
	build_push e2e-test-images/sample-apiserver 1.29.2 --binary "$bins/sample-apiserver" --path /sample-apiserver
	build_push etcd 3.6.4-0 --binary "$bins/etcd" --path /usr/local/bin/etcd
	log "images in $registry: $(curl -s "http://$registry/v2/_catalog")"
fi

ginkgo_cmd="ginkgo --procs $PROCS --focus '$FOCUS'${SKIP:+ --skip '$SKIP'} --timeout ${TIMEOUT}m e2e.test -- --provider local"
cmd="make conformance ${registry_pid:+RUNTIME=$RUNTIME }FOCUS='$FOCUS' SKIP='$SKIP' PROCS=$PROCS TIMEOUT=$TIMEOUT\`, i.e. \`$ginkgo_cmd"
log "running: $ginkgo_cmd (output: $run/ginkgo.log)"
start=$(date +%s)
rc=0
# ginkgo's --timeout ends the suite gracefully (reports are still written);
# the outer timeout is the hard stop a few minutes later.
timeout "$((TIMEOUT + 3))m" "$bins/ginkgo" --procs "$PROCS" --focus "$FOCUS" ${SKIP:+--skip "$SKIP"} \
	--timeout "${TIMEOUT}m" --no-color --silence-skips \
	"$bins/e2e.test" -- \
	--kubeconfig "$kubeconfig" --provider local --report-dir "$run" --e2e-output-dir "$run" \
	--kubectl-path "$(command -v kubectl)" >"$run/ginkgo.log" 2>&1 || rc=$?
secs=$(( $(date +%s) - start ))
log "ginkgo exited $rc after ${secs}s"
# Ginkgo's own summary counts every spec that did not pass as failed; the
# report below tells failures from specs that cannot run here.
tail -15 "$run/ginkgo.log" >&2

stop
trap - EXIT

junit=$(ls "$run"/junit_*.xml 2>/dev/null | head -1 || true)
[[ -n $junit ]] || { log "no JUnit report in $run (see $run/ginkgo.log)"; exit 1; }
# REPORT may be absolute (/tmp/NAME-conf.md) or relative to the repository.
[[ $REPORT == /* ]] || REPORT=$repo/$REPORT
(cd conformance && $GO run ./cmd/report -junit "$junit" -out "$REPORT" \
	-command "$cmd" -duration "$((secs / 60))m$((secs % 60))s" -note "$NOTE" \
	${registry_pid:+-runs-images -served-images "$served"})
log "wrote $REPORT: passed | failed | cannot run here | not selected:"
grep -F '| **total** |' "$REPORT" >&2 || true
