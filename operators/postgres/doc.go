// Package postgres is a sample database operator: PostgresCluster
// (postgres.converge.dev/v1alpha1) runs a PostgreSQL 15 primary with streaming
// replicas as pods on the process runtime, and PostgresBackup takes base
// backups. It is modelled on CloudNativePG's Cluster; see docs/postgres.md.
//
// What a PostgresCluster gets, all owned by it:
//   - the Secret <name>-credentials, generated once (existing keys are never
//     rewritten): superuser, replication and application passwords;
//   - the Services <name>-rw (role=primary), <name>-ro (role=replica) and
//     <name>-r (every instance);
//   - one pod per instance, <name>-<n>: a root init container preparing the
//     instance directory, an init container running initdb, a restore,
//     pg_basebackup or pg_rewind as the postgres user, and postgres itself run
//     directly, listening on the pod IP, with a pg_isready readiness probe.
//
// Data lives on the node in <Options.BaseDir>/data/<namespace>/<name>/<instance>/pgdata
// (or spec.storage.path/<instance>/pgdata) and survives pod restarts; the
// cluster's finalizer removes the directory with a cleanup pod once every
// instance has stopped.
//
// Contract of the reconciler (level-based; every step is idempotent):
//   - status.currentPrimary names the primary; status.targetPrimary differs
//     from it only while a failover or switchover is in progress. The old
//     primary's pod is deleted first (fencing), then the target is promoted
//     with pg_promote and the role labels move, which moves <name>-rw.
//     Replicas stream from the -rw cluster IP, so they follow the new primary
//     on their own (recovery_target_timeline=latest); the old primary comes
//     back as a replica through pg_rewind, or a new clone when that fails.
//     A switchover deletes the old primary's pod only once the stored status
//     names the target, so a lost status write never turns it into a
//     failover (NextSwitchoverStep).
//   - A failover starts when the primary's pod is gone or deleted, its
//     postgres process exited (restartCount went up), its node's Ready
//     condition was not True, or it was not ready, for
//     spec.failoverDelaySeconds; the ready replica with the highest received
//     LSN on a Ready node is promoted. An old primary that still answers SQL
//     as a primary (its node agent died or is cut off and leaves it running)
//     is shut down first, then its pod is deleted with a zero grace period.
//   - Backups: PostgresBackup runs pg_basebackup in a Job on the primary's
//     node. spec.backup.schedule creates them (label backup-kind=scheduled),
//     spec.backup.retentionPolicy deletes old scheduled ones, and
//     spec.backup.finalBackup takes one (backup-kind=final) in the finalizer
//     before the data goes. Backups are never owned by the cluster. A
//     deleted backup's finalizer deletes its Job in the foreground and waits
//     until no pod of it is left before it removes the backup's files.
//   - The operator reaches instances over TCP on their pod IPs with psql
//     (Options.SQL); it must run where pod IPs are reachable.
package postgres
