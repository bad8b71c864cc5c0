// +groupName=postgres.converge.dev
// +versionName=v1alpha1
package postgres

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/scheme"
)

// GroupVersion of the PostgresCluster and PostgresBackup kinds.
var GroupVersion = api.GroupVersion{Group: "postgres.converge.dev", Version: "v1alpha1"}

// PostgresCluster is a PostgreSQL cluster: one primary and streaming replicas.
//
// The markers describe crd_cluster.yaml for `converge operator generate` and
// controller-gen (bench/gen compares the two); the YAML stays hand-written.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pgc,categories=all
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.instances,statuspath=.status.instances,selectorpath=.status.selector
// +kubebuilder:printcolumn:name=Instances,type=integer,JSONPath=`.spec.instances`
// +kubebuilder:printcolumn:name=Ready,type=integer,JSONPath=`.status.readyInstances`
// +kubebuilder:printcolumn:name=Primary,type=string,JSONPath=`.status.currentPrimary`
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
type PostgresCluster struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:default={}
	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is the desired state of a PostgresCluster.
// +kubebuilder:validation:XValidation:rule="self.postgresVersion == oldSelf.postgresVersion",message="postgresVersion is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.bootstrap) == has(oldSelf.bootstrap) && (!has(self.bootstrap) || self.bootstrap == oldSelf.bootstrap)",message="bootstrap is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.storage.path) == has(oldSelf.storage.path) && (!has(self.storage.path) || self.storage.path == oldSelf.storage.path)",message="storage.path is immutable"
type ClusterSpec struct {
	// Instances is the number of PostgreSQL instances (1-9, default 1).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	Instances int32 `json:"instances,omitempty"`
	// PostgresVersion is the major version (15 only; immutable).
	// +kubebuilder:default=15
	// +kubebuilder:validation:XValidation:rule="self == 15",message="unsupported postgresVersion: only PostgreSQL 15 is supported"
	PostgresVersion int32 `json:"postgresVersion,omitempty"`
	// Storage says where the instances' data directories live on the node.
	// +kubebuilder:default={}
	Storage StorageSpec `json:"storage,omitempty"`
	// Resources of the postgres container.
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	// Parameters are postgresql.conf settings.
	// +kubebuilder:validation:XValidation:rule="!['listen_addresses', 'port', 'unix_socket_directories', 'primary_conninfo', 'cluster_name', 'hba_file', 'data_directory', 'config_file', 'synchronous_standby_names'].exists(k, k in self)",message="listen_addresses, port, unix_socket_directories, primary_conninfo, cluster_name, hba_file, data_directory, config_file and synchronous_standby_names are managed by the operator"
	Parameters map[string]string `json:"parameters,omitempty"`
	// Bootstrap says how the first instance gets its data (immutable).
	Bootstrap *BootstrapSpec `json:"bootstrap,omitempty"`
	// SynchronousReplication makes commits wait for one replica.
	// +kubebuilder:default=false
	SynchronousReplication bool `json:"synchronousReplication,omitempty"`
	// Backup configures scheduled backups and retention.
	Backup *BackupSpec `json:"backup,omitempty"`
	// PrimaryUpdateStrategy is Unsupervised (switch over and update the
	// primary automatically) or Supervised (wait for spec.primary).
	// +kubebuilder:default=Unsupervised
	// +kubebuilder:validation:Enum=Unsupervised;Supervised
	PrimaryUpdateStrategy string `json:"primaryUpdateStrategy,omitempty"`
	// Primary requests a switchover to the named instance.
	Primary string `json:"primary,omitempty"`
	// FailoverDelaySeconds is how long an unready primary is tolerated.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	FailoverDelaySeconds int32 `json:"failoverDelaySeconds,omitempty"`
}

// StorageSpec places the data directories.
type StorageSpec struct {
	// Path is the host directory holding one directory per instance
	// (default <operator base dir>/data/<namespace>/<name>; immutable).
	// +kubebuilder:validation:Pattern=`^/.*`
	Path string `json:"path,omitempty"`
}

// BootstrapSpec is exactly one of InitDB and Recovery.
// +kubebuilder:validation:XValidation:rule="!(has(self.initdb) && has(self.recovery))",message="bootstrap takes one of initdb and recovery"
type BootstrapSpec struct {
	InitDB   *InitDBSpec   `json:"initdb,omitempty"`
	Recovery *RecoverySpec `json:"recovery,omitempty"`
}

// InitDBSpec creates an empty cluster with an application database.
type InitDBSpec struct {
	// +kubebuilder:default=app
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	Database string `json:"database,omitempty"`
	// +kubebuilder:default=app
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	Owner string `json:"owner,omitempty"`
}

// RecoverySpec restores a completed PostgresBackup of the same namespace.
type RecoverySpec struct {
	// +kubebuilder:validation:MinLength=1
	Backup string `json:"backup"`
	// Database and Owner name the source's application database and role
	// (default app): the role's password is reset to the new Secret's.
	// +kubebuilder:default=app
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	Database string `json:"database,omitempty"`
	// +kubebuilder:default=app
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	Owner string `json:"owner,omitempty"`
}

// BackupSpec configures scheduled backups.
type BackupSpec struct {
	// Schedule is a 5-field cron expression (UTC) or "@every <duration>".
	// +kubebuilder:validation:Pattern=`^(@(hourly|daily|midnight|weekly)|@every [0-9][0-9a-z.]*|[0-9*/,-]+ [0-9*/,-]+ [0-9*/,-]+ [0-9*/,-]+ [0-9*/,-]+)?$`
	Schedule string `json:"schedule,omitempty"`
	// RetentionPolicy deletes completed backups older than this ("7d",
	// "12h", "2w"); the newest completed backup is always kept.
	// +kubebuilder:validation:Pattern=`^[0-9]+[hdw]$`
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
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pgb
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Cluster,type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name=Phase,type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name=Size,type=integer,JSONPath=`.status.size`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
type PostgresBackup struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec   BackupObjectSpec `json:"spec,omitempty"`
	Status BackupStatus     `json:"status,omitempty"`
}

// BackupObjectSpec names the cluster to back up (immutable).
type BackupObjectSpec struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cluster is immutable"
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
