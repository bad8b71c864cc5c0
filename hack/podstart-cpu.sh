#!/usr/bin/env bash
# Where the CPU of a burst of pod starts on containerd goes, per process kind.
#
#   hack/podstart-cpu.sh [test-binary] [pods]
#
# Runs BenchmarkPodStartup/containerd (builtin/node; default 50 pods) under
# `perf record -a` and counts the samples, within the burst (create of the
# first pod until the last is seen Running; the benchmark logs the window with
# BENCH_WINDOW=1), of the processes that descend from the test process: the
# test process itself (agent, API server, etcd), containerd, the shims, runc
# (create/start; `runc init`'s stages separately), the CNI plugins. Prints CPU
# ms per pod by kind. test-binary defaults to one built from the worktree
# (`go test -c ./builtin/node`), so two builds can be compared run after run.
# Other BENCH_* variables pass through (BENCH_SHIM_GROUPS=-1: a shim per
# container). Needs perf (apt-get install linux-perf) and root.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
pods=${2:-50}
freq=1999
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -z "$bin" ]; then
	bin=$out/node.test
	go test -c -o "$bin" ./builtin/node
fi
bin=$(realpath "$bin")
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd builtin/node
BENCH_WINDOW=1 BENCH_NODE=${BENCH_NODE:-ps-node} BENCH_POD_CIDR=${BENCH_POD_CIDR:-10.73.0.0/16} \
	perf record -q -o "$out/perf.data" -k CLOCK_REALTIME -e cpu-clock -F $freq -a -- \
	"$bin" -test.run '^$' -test.bench 'PodStartup/containerd' -test.benchtime "${pods}x" >"$out/bench.txt" 2>&1 &
perfpid=$!
root=""
for _ in $(seq 50); do
	root=$(pgrep -P $perfpid | head -1 || true)
	[ -n "$root" ] && break
	sleep 0.1
done
wait $perfpid || true
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E 'p99-ms|FAIL|still exist' "$out/bench.txt" || { cat "$out/bench.txt"; exit 1; }
window=$(grep -o 'burst window [0-9]* [0-9]*' "$out/bench.txt" | tail -1 | cut -d' ' -f3,4)
[ -n "$window" ] && [ -n "$root" ] || { echo "no burst window or test process" >&2; exit 1; }
perf script -i "$out/perf.data" --show-task-events -F comm,pid,tid,time,event 2>/dev/null |
	python3 -c '
import collections, re, sys
root, t0, t1, n, freq = int(sys.argv[1]), int(sys.argv[2]) / 1e9, int(sys.argv[3]) / 1e9, int(sys.argv[4]), float(sys.argv[5])
fork = re.compile(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)")
sample = re.compile(r"^\s*(.*?)\s+(\d+)/\d+\s+([\d.]+):\s+cpu-clock")
parent, kinds, execs = {}, collections.Counter(), collections.Counter()
def ours(p):
    for _ in range(64):
        if p == root:
            return True
        p = parent.get(p)
        if p is None:
            return False
    return False
def kind(comm):
    if comm.startswith("runc:["):
        return "runc init (nsexec stages, then the container setup)"
    if comm == "exe":
        return "runc init (exec, binary clone)"
    if comm.startswith("containerd-shim"):
        return "containerd-shim-runc-v2"
    if comm.endswith(".test"):
        return "converge (test process: agent, API server, etcd)"
    return comm
for line in sys.stdin:
    m = fork.search(line)
    if m:
        child, par = int(m.group(1)), int(m.group(2))
        if child != par:
            parent[child] = par
        continue
    m = sample.match(line)
    if m and t0 <= float(m.group(3)) <= t1 and int(m.group(2)) != 0 and ours(int(m.group(2))):
        kinds[kind(m.group(1))] += 1
ms = 1000.0 / freq
total = sum(kinds.values())
print(f"burst {t1 - t0:.2f} s, {n} pods: {total * ms:.0f} ms CPU, {total * ms / n:.1f} ms per pod")
for k, v in kinds.most_common():
    if v * ms / n >= 0.05:
        print(f"  {k:55s} {v * ms / n:6.1f} ms/pod {100 * v / total:5.1f} %")
' "$root" $window "$pods" $freq
