package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Labels and annotations on the objects the operator creates.
const (
	// LabelCluster names the PostgresCluster an object belongs to.
	LabelCluster = "postgres.converge.dev/cluster"
	// LabelInstance names the instance a pod runs.
	LabelInstance = "postgres.converge.dev/instance"
	// LabelRole is "primary" or "replica"; the -rw and -ro Services select on it.
	LabelRole = "postgres.converge.dev/role"
	// LabelBackup names the PostgresBackup a Job or pod belongs to.
	LabelBackup = "postgres.converge.dev/backup"
	// LabelBackupKind is on the PostgresBackups the operator creates itself:
	// BackupKindScheduled (spec.backup.schedule; subject to retention) or
	// BackupKindFinal (taken on delete; never deleted by the operator).
	LabelBackupKind = "postgres.converge.dev/backup-kind"
	// AnnotationConfigHash is the hash of the rendered configuration a pod runs.
	AnnotationConfigHash = "postgres.converge.dev/config-hash"
	// ClusterFinalizer and BackupFinalizer guard the data on the node.
	ClusterFinalizer = "postgres.converge.dev/cluster"
	BackupFinalizer  = "postgres.converge.dev/backup"
)

// Values of LabelBackupKind.
const (
	BackupKindScheduled = "scheduled"
	BackupKindFinal     = "final"
)

// Roles.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

// Port is the port every instance listens on.
const Port = 5432

// Secret keys of <cluster>-credentials.
const (
	KeySuperuserPassword   = "superuser-password"
	KeyReplicationPassword = "replication-password"
	KeyUsername            = "username"
	KeyPassword            = "password"
	KeyDatabase            = "dbname"
)

// Users the operator creates in every cluster.
const (
	Superuser       = "postgres"
	ReplicationUser = "streaming_replica"
)

// defaultParameters are set on every instance unless spec.parameters overrides them.
var defaultParameters = map[string]string{
	"wal_level":         "replica",
	"hot_standby":       "on",
	"max_wal_senders":   "10",
	"wal_keep_size":     "256MB",
	"max_connections":   "100",
	"shared_buffers":    "32MB",
	"wal_log_hints":     "on",
	"logging_collector": "off",
}

// Instance names: <cluster>-<ordinal>, ordinals from 1.

// InstanceName is the name of instance n of cluster.
func InstanceName(cluster string, n int) string { return cluster + "-" + strconv.Itoa(n) }

// Ordinal returns n of "<cluster>-<n>", or 0.
func Ordinal(cluster, instance string) int {
	s, ok := strings.CutPrefix(instance, cluster+"-")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// DesiredInstances returns the instances a cluster of count instances keeps:
// the primary (when set), then the lowest ordinals. Scaling down therefore
// removes the highest ordinals first and never the primary.
func DesiredInstances(cluster, primary string, count int) []string {
	var out []string
	if primary != "" && count > 0 {
		out = append(out, primary)
	}
	for n := 1; len(out) < count; n++ {
		if name := InstanceName(cluster, n); name != primary {
			out = append(out, name)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return Ordinal(cluster, a) - Ordinal(cluster, b) })
	return out
}

// RenderParameters returns the postgres command-line settings (-c name=value,
// sorted by name) for an instance: defaults, then the user's parameters, then
// what the operator manages (listen address, port, sockets, replication
// source, cluster name).
func RenderParameters(user map[string]string, instance, rwHost, passfile string) []string {
	p := maps.Clone(defaultParameters)
	maps.Copy(p, user)
	p["listen_addresses"] = "$(POD_IP)"
	p["port"] = strconv.Itoa(Port)
	p["unix_socket_directories"] = ""
	p["cluster_name"] = instance
	p["primary_conninfo"] = fmt.Sprintf("host=%s port=%d user=%s passfile=%s application_name=%s", rwHost, Port, ReplicationUser, passfile, instance)
	args := make([]string, 0, 2*len(p))
	for _, k := range slices.Sorted(maps.Keys(p)) {
		args = append(args, "-c", k+"="+p[k])
	}
	return args
}

// ConfigHash identifies the configuration pods must run: a pod whose
// AnnotationConfigHash differs is replaced by a rolling update.
func ConfigHash(spec *ClusterSpec) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(spec.Parameters)) {
		fmt.Fprintf(h, "%s=%s\n", k, spec.Parameters[k])
	}
	fmt.Fprintf(h, "resources=%v\n", spec.Resources)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// SynchronousStandbyNames is the primary's synchronous_standby_names for the
// spec: any one replica when synchronous replication is on and there are
// replicas, otherwise empty.
func SynchronousStandbyNames(spec *ClusterSpec) string {
	if spec.SynchronousReplication && spec.Instances > 1 {
		return "ANY 1 (*)"
	}
	return ""
}

// HBA is the pg_hba.conf of every instance: password (SCRAM) authentication
// for every TCP connection, replication included.
const HBA = `# managed by the converge postgres operator
local   all          all                    peer
host    all          all          0.0.0.0/0 scram-sha-256
host    replication  all          0.0.0.0/0 scram-sha-256
`

var retentionRe = regexp.MustCompile(`^([0-9]+)([hdw])$`)

// ParseRetention parses a retention policy ("30d", "12h", "2w").
func ParseRetention(s string) (time.Duration, error) {
	m := retentionRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("retention policy %q: want <n>h, <n>d or <n>w", s)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
	return time.Duration(n) * unit, nil
}
