#!/usr/bin/env bash
# Runs the side-by-side benchmarks and rewrites docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
run() { # name, dir, args...
  local name=$1 dir=$2; shift 2
  echo "== $name: (cd $dir && go test $*)" >&2
  (cd "$dir" && go test "$@") | tee "$out/$name.txt" >&2
}
run create . -run '^$' -bench 'BenchmarkCreate' -benchtime 3000x ./controlplane/
run createil . -run '^$' -bench 'BenchmarkInterleavedCreate' -benchtime 10000x -count 3 ./controlplane/
run secure . -run '^$' -bench 'BenchmarkSecureCreate' -benchtime 20000x -count 3 ./controlplane/
run tracingproc bench -run '^$' -bench 'BenchmarkTracingProcesses' -benchtime 40000x -count 3 ./tracing/
run managedfields . -run '^$' -bench 'BenchmarkManagedFields' -benchtime 100x -count 3 ./framework/apiserver/
echo "== againstcommit: hack/bench-against-commit.sh 'bbe7e82^' -benchtime 40000x -count 3" >&2
./hack/bench-against-commit.sh 'bbe7e82^' -benchtime 40000x -count 3 | tee "$out/againstcommit.txt" >&2
run securetransport bench -run '^$' -bench 'BenchmarkSecureCreateTransport' -benchtime 20000x -count 3 ./secure/
run h2servers bench -run '^$' -bench 'BenchmarkSecureCreateHTTP2Servers' -benchtime 20000x -count 3 ./secure/
run localwatch . -run '^$' -bench 'BenchmarkLocalWatch' -benchtime 30000x -count 3 ./framework/storage/etcd/
run secureapply bench -run '^$' -bench 'BenchmarkSecureApplyClientGo' -benchtime 20000x -count 3 ./secure/
run fanout . -run '^$' -bench 'BenchmarkWatchFanout' -benchtime 1x ./framework/apiserver/
run rawput . -run '^$' -bench 'BenchmarkRawPut' -benchtime 2000x ./framework/storage/etcd/
run workqueue bench -run '^$' -bench 'BenchmarkWorkqueue' -benchmem -benchtime 1s -count 5 ./workqueue/
run crd . -run '^$' -bench 'BenchmarkCreate|BenchmarkCompileEtcdSchema' -benchtime 2000x ./crd/e2e/ ./crd/
run scheduler . -run '^$' -bench 'BenchmarkSchedulingBasic' -benchtime 1x ./builtin/scheduler/
run schedspread . -run '^$' -bench 'BenchmarkSchedulingSpreadAntiAffinity' -benchtime 1x ./builtin/scheduler/
run etcdmembers . -run '^$' -bench 'BenchmarkAPIWrite' -benchtime 3000x ./internal/faults/
run dsreads . -run '^$' -bench 'BenchmarkSteadyReconcile' -benchtime 200x -count 3 ./builtin/controllers/daemonset/
run jobreads . -run '^$' -bench 'BenchmarkSteadyReconcile' -benchtime 200x -count 3 ./builtin/controllers/job/
run deployment . -run '^$' -bench 'BenchmarkDeployment' -benchtime 1x -timeout 30m ./builtin/controllers/deployment/
run nodes . -run '^$' -bench 'FleetReady|PodsRunning' -benchtime 1x ./builtin/node/fleet/ ./builtin/node/
run podstartup . -run '^$' -bench 'PodStartup' -benchtime 50x ./builtin/node/
run faults . -run 'TestPartition|TestControllerManagerLeaderKill|TestNodeAgentDeath|TestAPIServerFailover' -v -count=1 ./internal/faults/
[ -x bench/.envtest-bin/kube-apiserver ] || make peer-bin >&2
run peer bench -run '^$' -bench 'BenchmarkKubeAPIServer' -benchtime 1x -timeout 30m ./peer/
run informer bench -run '^$' -bench 'BenchmarkInformerSync' -count 2 ./informer/
(cd bench && go run ./cmd/benchreport < "$out/workqueue.txt") > "$out/workqueue.md"
(cd bench && go run ./cmd/benchreport < "$out/informer.txt") > "$out/informer.md"
go run ./hack/benchreport -dir "$out" -doc docs/PERFORMANCE.md
echo "rewrote the generated section of docs/PERFORMANCE.md" >&2
