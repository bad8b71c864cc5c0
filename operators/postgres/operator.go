package postgres

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/operators"
)

//go:embed crd_cluster.yaml
var crdCluster []byte

//go:embed crd_backup.yaml
var crdBackup []byte

// Options configure the operator. The zero value means the defaults.
type Options struct {
	// BaseDir is the node directory under which clusters keep their data
	// (<BaseDir>/data/<namespace>/<cluster>) unless spec.storage.path is set,
	// and backups (<BaseDir>/backups/<namespace>/<backup>). Default
	// /var/lib/converge/postgres.
	BaseDir string
	// BinDir holds the PostgreSQL 15 server binaries on the nodes (default
	// /usr/lib/postgresql/15/bin).
	BinDir string
	// UID is the user postgres runs as (default 101).
	UID int64
	// PollInterval is how often a cluster's instances are queried (default 5 s).
	PollInterval time.Duration
	// SQL runs SQL on an instance (default: the psql program on the
	// operator's PATH, connecting to the pod IP as the superuser).
	SQL SQLFunc
	// Now is the operator's clock (default time.Now): backup schedules,
	// retention and backup timestamps follow it. Tests move it forward.
	Now func() time.Time
}

func (o *Options) complete() {
	if o.BaseDir == "" {
		o.BaseDir = "/var/lib/converge/postgres"
	}
	if o.BinDir == "" {
		o.BinDir = "/usr/lib/postgresql/15/bin"
	}
	if o.UID == 0 {
		o.UID = 101
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Second
	}
	if o.SQL == nil {
		o.SQL = PSQL("psql")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// SQLFunc runs query on the instance at host as the superuser and returns
// psql's unaligned, tuples-only output.
type SQLFunc func(ctx context.Context, host, password, query string) (string, error)

// PSQL returns a SQLFunc running the psql program at path.
func PSQL(path string) SQLFunc {
	return func(ctx context.Context, host, password, query string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		conn := fmt.Sprintf("host=%s port=%d user=%s dbname=postgres connect_timeout=3", host, Port, Superuser)
		cmd := exec.CommandContext(ctx, path, "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", conn, "-c", query)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+password)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("psql on %s: %w: %s", host, err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
}

// Operator is the PostgreSQL operator.
type Operator struct{ opts Options }

// New returns the operator configured by the environment (OptionsFromEnv):
// the plugin and the standalone binary have no other configuration.
func New() operators.Operator { return NewWithOptions(OptionsFromEnv(os.Getenv)) }

// Environment variables read by OptionsFromEnv.
const (
	EnvBaseDir      = "CONVERGE_POSTGRES_BASE_DIR"
	EnvBinDir       = "CONVERGE_POSTGRES_BIN_DIR"
	EnvPollInterval = "CONVERGE_POSTGRES_POLL_INTERVAL"
)

// OptionsFromEnv reads BaseDir, BinDir and PollInterval (a Go duration) from
// the environment variables EnvBaseDir, EnvBinDir and EnvPollInterval through
// getenv; unset or malformed values mean the defaults.
func OptionsFromEnv(getenv func(string) string) Options {
	o := Options{BaseDir: getenv(EnvBaseDir), BinDir: getenv(EnvBinDir)}
	if d, err := time.ParseDuration(getenv(EnvPollInterval)); err == nil && d > 0 {
		o.PollInterval = d
	}
	return o
}

// NewWithOptions returns the operator configured by opts.
func NewWithOptions(opts Options) *Operator {
	opts.complete()
	return &Operator{opts: opts}
}

// Name implements operators.Operator.
func (*Operator) Name() string { return "postgres" }

// CRDs implements operators.Operator.
func (*Operator) CRDs() [][]byte { return [][]byte{crdCluster, crdBackup} }

// RBACRules implements operators.RBACRules.
func (*Operator) RBACRules() []operators.PolicyRule {
	return []operators.PolicyRule{
		{APIGroups: []string{GroupVersion.Group}, Resources: []string{"postgresclusters", "postgresclusters/status", "postgresbackups", "postgresbackups/status"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"pods", "services", "secrets"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		// The primary's node going NotReady starts a failover.
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"*"}},
	}
}

// Setup implements operators.Operator.
func (o *Operator) Setup(mgr *manager.Manager) error {
	for _, add := range []func() error{
		func() error { return AddToScheme(mgr.Scheme()) },
		func() error { return corev1.AddToScheme(mgr.Scheme()) },
		func() error { return batchv1.AddToScheme(mgr.Scheme()) },
	} {
		if err := add(); err != nil {
			return err
		}
	}
	cr := &ClusterReconciler{Reader: mgr.Reader(), Client: mgr.Client(), Recorder: mgr.EventRecorder("postgres-operator"), Options: o.opts, Now: o.opts.Now}
	if err := builder.ControllerManagedBy(mgr).
		Named("postgrescluster").
		For(builder.Kind[*PostgresCluster]()).
		Owns(builder.Kind[*corev1.Pod]()).
		Owns(builder.Kind[*corev1.Service]()).
		Owns(builder.Kind[*corev1.Secret]()).
		// Backups are not owned by their cluster, but their progress matters
		// to it (lastSuccessfulBackup, retention, the next scheduled one).
		Watches(builder.Kind[*PostgresBackup](), handler.EnqueueRequestsFromMapFunc(backupCluster)).
		Complete(cr); err != nil {
		return err
	}
	br := &BackupReconciler{Reader: mgr.Reader(), Client: mgr.Client(), Recorder: mgr.EventRecorder("postgres-operator"), Options: o.opts, Now: o.opts.Now}
	return builder.ControllerManagedBy(mgr).
		Named("postgresbackup").
		For(builder.Kind[*PostgresBackup]()).
		Owns(builder.Kind[*batchv1.Job]()).
		Owns(builder.Kind[*corev1.Pod]()).
		Complete(br)
}

// backupCluster maps a PostgresBackup to its cluster.
func backupCluster(_ context.Context, obj api.Object) []reconcile.Request {
	b, ok := obj.(*PostgresBackup)
	if !ok || b.Spec.Cluster == "" {
		return nil
	}
	return []reconcile.Request{{ObjectKey: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Cluster}}}
}
