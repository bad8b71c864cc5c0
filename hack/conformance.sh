#!/usr/bin/env bash
# Runs the upstream Kubernetes conformance specs against a default
# `converge up` and writes docs/CONFORMANCE.md (see `make conformance`).
#
#   1. builds e2e.test and ginkgo from the conformance module (cached by its
#      go.sum, see conformance/build.sh) and bin/converge;
#   2. starts `converge up` (HTTPS, RBAC, embedded etcd, local node on the
#      process runtime) in a temporary data dir on a free port;
#   3. runs the focused specs in parallel with ginkgo, within TIMEOUT;
#   4. stops converge and writes the report from the JUnit XML.
#
# Environment (defaults in brackets):
#   FOCUS    ginkgo --focus          ['\[Conformance\]']
#   SKIP     ginkgo --skip           ['']
#   PROCS    ginkgo --procs          [2]
#   TIMEOUT  whole suite, in minutes   [45]
#   POD_CIDR converge up --pod-cidr  [127.77.0.0/16: not the default, so pods of
#            another converge on this machine never share an address]
#   SERVICE_CIDR converge up --service-cidr [its default; give each run on a
#            machine its own, e.g. 127.89.0.0/16]
#   REPORT   Markdown output          [docs/CONFORMANCE.md]
#   NOTE     extra paragraph for the report header
# The run's logs and JUnit XML stay in conformance/.cache/runs/<time>/.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
GO=${GO:-go}
FOCUS=${FOCUS:-'\[Conformance\]'}
SKIP=${SKIP:-}
PROCS=${PROCS:-2}
TIMEOUT=${TIMEOUT:-45}
POD_CIDR=${POD_CIDR:-127.77.0.0/16}
SERVICE_CIDR=${SERVICE_CIDR:-}
REPORT=${REPORT:-docs/CONFORMANCE.md}
NOTE=${NOTE:-}

log() { echo "conformance: $*" >&2; }

bins=$(./conformance/build.sh | tail -1)
$GO build -o bin/converge ./cmd/converge

run=$repo/conformance/.cache/runs/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$run"
data=$(mktemp -d /tmp/converge-conformance.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
kubeconfig=$data/kubeconfig

log "converge up --data-dir $data --port $port (log: $run/converge.log)"
./bin/converge up --data-dir "$data" --port "$port" --pod-cidr "$POD_CIDR" \
	${SERVICE_CIDR:+--service-cidr "$SERVICE_CIDR"} >"$run/converge.log" 2>&1 &
converge_pid=$!
stop() {
	if kill -0 "$converge_pid" 2>/dev/null; then
		kill -TERM "$converge_pid" 2>/dev/null || true
		for _ in $(seq 60); do kill -0 "$converge_pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$converge_pid" 2>/dev/null || true
	fi
	wait "$converge_pid" 2>/dev/null || true
	rm -rf "$data"
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

ginkgo_cmd="ginkgo --procs $PROCS --focus '$FOCUS'${SKIP:+ --skip '$SKIP'} --timeout ${TIMEOUT}m e2e.test -- --provider local"
cmd="make conformance FOCUS='$FOCUS' SKIP='$SKIP' PROCS=$PROCS TIMEOUT=$TIMEOUT\`, i.e. \`$ginkgo_cmd"
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
tail -15 "$run/ginkgo.log" >&2

stop
trap - EXIT

junit=$(ls "$run"/junit_*.xml 2>/dev/null | head -1 || true)
[[ -n $junit ]] || { log "no JUnit report in $run (see $run/ginkgo.log)"; exit 1; }
(cd conformance && $GO run ./cmd/report -junit "$junit" -out "$repo/$REPORT" \
	-command "$cmd" -duration "$((secs / 60))m$((secs % 60))s" -note "$NOTE")
log "wrote $REPORT"
