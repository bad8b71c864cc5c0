// Package faults holds Converge's fault-injection suite; it is test-only (all
// code is in _test.go files).
//
// The harness (harness_test.go) builds the converge binary once per test binary,
// runs etcd members as child processes (the test binary re-executed as a member,
// see RunMember in framework/storage/etcd) and `converge up` as a child process,
// each on its own 127.0.0.x address, and kills them with SIGKILL. Every scenario
// is bounded by a context deadline; child processes are killed by PID when a
// test ends, and their output is printed when it fails.
//
// Scenarios (crash_test.go):
//   - an etcd member (the leader) of three is killed: API writes continue; the
//     member restarts with InitialClusterState existing and catches up;
//   - `converge up` is killed during 1,000 concurrent ConfigMap creates: every
//     acknowledged create survives with the uid it was acknowledged with, every
//     stored value decodes with uid and creationTimestamp, a watcher resumes
//     from its last resourceVersion (or gets 410 and relists), and a Deployment
//     created before the crash converges to its replicas with one ReplicaSet;
//   - everything is killed and restarted: the state is identical.
//
// Partitions (partition_test.go) need per-member packet filtering on loopback;
// the test probes for it and skips with the reason when the machine lacks it.
//
// BenchmarkAPIWrite (bench_test.go) measures ConfigMap creates/s through one API
// server against 1 and 3 etcd members.
package faults
