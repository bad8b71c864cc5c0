package postgres

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/scheme"
)

// GroupVersion of the PostgresCluster and PostgresBackup kinds.
var GroupVersion = api.GroupVersion{Group: "postgres.converge.dev", Version: "v1alpha1"}

// PostgresCluster is a PostgreSQL cluster: one primary and streaming replicas.
type PostgresCluster struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           ClusterSpec   `json:"spec,omitempty"`
	Status         ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is the desired state of a PostgresCluster.
type ClusterSpec struct {
	// Instances is the number of PostgreSQL instances (1-9, default 1).
	Instances int32 `json:"instances,omitempty"`
	// PostgresVersion is the major version (15 only; immutable).
	PostgresVersion int32 `json:"postgresVersion,omitempty"`
	// Storage says where the instances' data directories live on the node.
	Storage StorageSpec `json:"storage,omitempty"`
	// Resources of the postgres container.
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Parameters are postgresql.conf settings.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Bootstrap says how the first instance gets its data (immutable).
	Bootstrap *BootstrapSpec `json:"bootstrap,omitempty"`
	// SynchronousReplication makes commits wait for one replica.
	SynchronousReplication bool `json:"synchronousReplication,omitempty"`
	// Backup configures scheduled backups and retention.
	Backup *BackupSpec `json:"backup,omitempty"`
	// PrimaryUpdateStrategy is Unsupervised (switch over and update the
	// primary automatically) or Supervised (wait for spec.primary).
	PrimaryUpdateStrategy string `json:"primaryUpdateStrategy,omitempty"`
	// Primary requests a switchover to the named instance.
	Primary string `json:"primary,omitempty"`
	// FailoverDelaySeconds is how long an unready primary is tolerated.
	FailoverDelaySeconds int32 `json:"failoverDelaySeconds,omitempty"`
}

// StorageSpec places the data directories.
type StorageSpec struct {
	// Path is the host directory holding one directory per instance
	// (default <operator base dir>/data/<namespace>/<name>; immutable).
	Path string `json:"path,omitempty"`
}

// BootstrapSpec is exactly one of InitDB and Recovery.
type BootstrapSpec struct {
	InitDB   *InitDBSpec   `json:"initdb,omitempty"`
	Recovery *RecoverySpec `json:"recovery,omitempty"`
}

// InitDBSpec creates an empty cluster with an application database.
type InitDBSpec struct {
	Database string `json:"database,omitempty"`
	Owner    string `json:"owner,omitempty"`
}

// RecoverySpec restores a completed PostgresBackup of the same namespace.
type RecoverySpec struct {
	Backup string `json:"backup"`
	// Database and Owner name the source's application database and role
	// (default app): the role's password is reset to the new Secret's.
	Database string `json:"database,omitempty"`
	Owner    string `json:"owner,omitempty"`
}

// BackupSpec configures scheduled backups.
type BackupSpec struct {
	// Schedule is a 5-field cron expression (UTC) or "@every <duration>".
	Schedule string `json:"schedule,omitempty"`
	// RetentionPolicy deletes completed backups older than this ("7d",
	// "12h", "2w"); the newest completed backup is always kept.
	RetentionPolicy string `json:"retentionPolicy,omitempty"`
	// FinalBackup takes a backup before the cluster is deleted.
	FinalBackup bool `json:"finalBackup,omitempty"`
}

// Primary update strategies.
const (
	Unsupervised = "Unsupervised"
	Supervised   = "Supervised"
)

// ClusterStatus is the observed state of a PostgresCluster.
type ClusterStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Phase              string `json:"phase,omitempty"`
	// CurrentPrimary is the instance acting as primary.
	CurrentPrimary string `json:"currentPrimary,omitempty"`
	// TargetPrimary differs from CurrentPrimary during a failover or switchover.
	TargetPrimary string `json:"targetPrimary,omitempty"`
	// FailoverReason says why TargetPrimary was chosen ("Failover", "Switchover").
	FailoverReason string `json:"failoverReason,omitempty"`
	// Instances is the number of instance pods (scale subresource).
	Instances      int32 `json:"instances,omitempty"`
	ReadyInstances int32 `json:"readyInstances,omitempty"`
	// Selector selects the instance pods (scale subresource).
	Selector             string           `json:"selector,omitempty"`
	InstancesStatus      []InstanceStatus `json:"instancesStatus,omitempty"`
	Conditions           []api.Condition  `json:"conditions,omitempty"`
	SecretName           string           `json:"secretName,omitempty"`
	WriteService         string           `json:"writeService,omitempty"`
	ReadService          string           `json:"readService,omitempty"`
	ConfigHash           string           `json:"configHash,omitempty"`
	InitializedFrom      string           `json:"initializedFrom,omitempty"`
	FinalBackup          string           `json:"finalBackup,omitempty"`
	LastSuccessfulBackup *api.Time        `json:"lastSuccessfulBackup,omitempty"`
	LastScheduledBackup  *api.Time        `json:"lastScheduledBackup,omitempty"`
}

// InstanceStatus is what the operator last saw of one instance.
type InstanceStatus struct {
	Name  string `json:"name"`
	Role  string `json:"role,omitempty"`
	Ready bool   `json:"ready"`
	// LSN is the current WAL position (primary) or the last received one (replica).
	LSN          string `json:"lsn,omitempty"`
	PodIP        string `json:"podIP,omitempty"`
	NodeName     string `json:"nodeName,omitempty"`
	RestartCount int32  `json:"restartCount,omitempty"`
}

// PostgresClusterList is a list of PostgresClusters.
type PostgresClusterList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []PostgresCluster `json:"items"`
}

// PostgresBackup is an on-demand base backup of a cluster.
type PostgresBackup struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           BackupObjectSpec `json:"spec,omitempty"`
	Status         BackupStatus     `json:"status,omitempty"`
}

// BackupObjectSpec names the cluster to back up (immutable).
type BackupObjectSpec struct {
	Cluster string `json:"cluster"`
}

// BackupStatus is the observed state of a PostgresBackup.
type BackupStatus struct {
	Phase       string    `json:"phase,omitempty"`
	StartedAt   *api.Time `json:"startedAt,omitempty"`
	CompletedAt *api.Time `json:"completedAt,omitempty"`
	// Location is the host directory holding the backup (a plain-format
	// pg_basebackup in <location>/data).
	Location string `json:"location,omitempty"`
	NodeName string `json:"nodeName,omitempty"`
	// Size in bytes, when the operator can read the location.
	Size  int64  `json:"size,omitempty"`
	Error string `json:"error,omitempty"`
	Job   string `json:"job,omitempty"`
}

// Backup phases.
const (
	BackupPending   = "Pending"
	BackupRunning   = "Running"
	BackupCompleted = "Completed"
	BackupFailed    = "Failed"
)

// PostgresBackupList is a list of PostgresBackups.
type PostgresBackupList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty"`
	Items        []PostgresBackup `json:"items"`
}

// AddToScheme registers the kinds of this package.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &PostgresCluster{}, &PostgresClusterList{}, &PostgresBackup{}, &PostgresBackupList{})
}
