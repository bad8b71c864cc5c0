package postgres

import (
	"path/filepath"
	"strconv"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// prepareScript runs as root in every instance pod: it makes the instance
// directory the postgres user's and writes the password file replication and
// pg_rewind use. A new replica (FRESH=1) starts from an empty data directory.
const prepareScript = `set -eu
if [ "${FRESH:-0}" = 1 ] && [ "$ROLE" = replica ]; then rm -rf "$PGDATA"; fi
mkdir -p "$INSTANCE_DIR"
chown "$PG_UID" "$INSTANCE_DIR"
chmod 700 "$INSTANCE_DIR"
umask 077
printf '*:*:*:%s:%s\n*:*:*:%s:%s\n' streaming_replica "$REPLICATION_PASSWORD" postgres "$SUPERUSER_PASSWORD" > "$INSTANCE_DIR/pgpass"
chown "$PG_UID" "$INSTANCE_DIR/pgpass"
`

// bootstrapScript runs as the postgres user: initdb or restore on the first
// instance, pg_basebackup on replicas, pg_rewind (or a new clone) for a former
// primary that comes back as a replica.
const bootstrapScript = `set -eu
B="$PG_BIN"
export PGPASSFILE="$INSTANCE_DIR/pgpass"
single() {
  "$B/postgres" --single -D "$PGDATA" -c exit_on_error=on -c listen_addresses= -c unix_socket_directories= \
    -c synchronous_standby_names= -c synchronous_commit=local postgres
}
clone() {
  rm -rf "$PGDATA"
  echo "cloning the primary at $RW_HOST"
  "$B/pg_basebackup" -h "$RW_HOST" -p 5432 -U streaming_replica -D "$PGDATA" -X stream -c fast -w
  touch "$PGDATA/standby.signal"
}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ "$ROLE" = replica ]; then
    clone
  elif [ "$BOOTSTRAP" = recovery ]; then
    echo "restoring $BACKUP_PATH"
    rm -rf "$PGDATA"
    mkdir -m 700 "$PGDATA"
    cp -a "$BACKUP_PATH/." "$PGDATA/"
    chmod 700 "$PGDATA"
    rm -f "$PGDATA/standby.signal" "$PGDATA/recovery.signal" "$PGDATA/postmaster.pid"
    printf '%s' "$PG_HBA" > "$PGDATA/pg_hba.conf"
    printf "ALTER SYSTEM RESET synchronous_standby_names;\nALTER ROLE postgres PASSWORD '%s';\nALTER ROLE streaming_replica PASSWORD '%s';\nALTER ROLE %s PASSWORD '%s';\n" \
      "$SUPERUSER_PASSWORD" "$REPLICATION_PASSWORD" "$APP_OWNER" "$APP_PASSWORD" | single
  else
    echo "initdb"
    umask 077
    printf '%s' "$SUPERUSER_PASSWORD" > "$INSTANCE_DIR/pwfile"
    "$B/initdb" -D "$PGDATA" -U postgres --pwfile="$INSTANCE_DIR/pwfile" --auth-local=peer --auth-host=scram-sha-256 \
      --data-checksums -E UTF8 --no-locale
    rm -f "$INSTANCE_DIR/pwfile"
    printf '%s' "$PG_HBA" > "$PGDATA/pg_hba.conf"
    printf "CREATE ROLE streaming_replica LOGIN REPLICATION PASSWORD '%s';\nCREATE ROLE %s LOGIN PASSWORD '%s';\nCREATE DATABASE %s OWNER %s;\n" \
      "$REPLICATION_PASSWORD" "$APP_OWNER" "$APP_PASSWORD" "$APP_DB" "$APP_OWNER" | single
  fi
elif [ "$ROLE" = replica ] && [ ! -f "$PGDATA/standby.signal" ]; then
  echo "former primary: rewinding to the primary at $RW_HOST"
  rm -f "$PGDATA/postmaster.pid"
  if "$B/pg_rewind" -D "$PGDATA" --source-server="host=$RW_HOST port=5432 user=postgres dbname=postgres"; then
    touch "$PGDATA/standby.signal"
  else
    echo "pg_rewind failed"
    clone
  fi
fi
rm -f "$PGDATA/postmaster.pid"
`

// readinessScript is the instance pods' readiness probe.
const readinessScript = `exec "$PG_BIN/pg_isready" -q -h "$POD_IP" -p 5432`

// InstancePod describes one instance pod to build.
type InstancePod struct {
	Cluster  *PostgresCluster
	Instance string
	// Role is the role the instance starts with (RolePrimary or RoleReplica).
	Role string
	// RWHost is the -rw Service's cluster IP replicas stream from.
	RWHost string
	// DataRoot is the cluster's directory on the node.
	DataRoot string
	// Fresh wipes an existing data directory of a new replica.
	Fresh bool
	// BackupPath is the base backup a recovery bootstrap restores.
	BackupPath string
	NodeName   string
	ConfigHash string
	BinDir     string
	UID        int64
}

// spreadInstances is the instances' preferred pod anti-affinity, as
// CloudNativePG's default: the scheduler avoids a node that already runs an
// instance of the cluster, so that losing one node loses one instance. It is a
// preference: a cluster with more instances than nodes still runs.
func spreadInstances(cluster string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &api.LabelSelector{
					MatchLabels:      map[string]string{LabelCluster: cluster},
					MatchExpressions: []api.LabelSelectorRequirement{{Key: LabelInstance, Operator: api.LabelSelectorOpExists}},
				},
				TopologyKey: "kubernetes.io/hostname",
			},
		}},
	}}
}

// InstanceDir is the directory of instance on the node.
func InstanceDir(dataRoot, instance string) string { return filepath.Join(dataRoot, instance) }

// DataDir is instance's PGDATA.
func DataDir(dataRoot, instance string) string {
	return filepath.Join(InstanceDir(dataRoot, instance), "pgdata")
}

// SecretName is the credentials Secret of cluster.
func SecretName(cluster string) string { return cluster + "-credentials" }

func secretEnv(cluster, name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(cluster)}, Key: key}}}
}

// BuildInstancePod returns the pod of one instance: a root init container
// preparing the directory, an init container bootstrapping the data directory
// as the postgres user, and postgres itself run directly.
func BuildInstancePod(p InstancePod) *corev1.Pod {
	c := p.Cluster
	instDir := InstanceDir(p.DataRoot, p.Instance)
	pgdata := DataDir(p.DataRoot, p.Instance)
	bootstrap, db, owner := "initdb", "app", "app"
	if b := c.Spec.Bootstrap; b != nil {
		if b.Recovery != nil {
			bootstrap = "recovery"
			if b.Recovery.Database != "" {
				db = b.Recovery.Database
			}
			if b.Recovery.Owner != "" {
				owner = b.Recovery.Owner
			}
		}
		if b.InitDB != nil {
			if b.InitDB.Database != "" {
				db = b.InitDB.Database
			}
			if b.InitDB.Owner != "" {
				owner = b.InitDB.Owner
			}
		}
	}
	fresh := "0"
	if p.Fresh {
		fresh = "1"
	}
	env := []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "PG_BIN", Value: p.BinDir},
		{Name: "PG_UID", Value: strconv.FormatInt(p.UID, 10)},
		{Name: "PGDATA", Value: pgdata},
		{Name: "INSTANCE_DIR", Value: instDir},
		{Name: "ROLE", Value: p.Role},
		{Name: "RW_HOST", Value: p.RWHost},
		{Name: "BOOTSTRAP", Value: bootstrap},
		{Name: "BACKUP_PATH", Value: p.BackupPath},
		{Name: "APP_DB", Value: db},
		{Name: "APP_OWNER", Value: owner},
		{Name: "FRESH", Value: fresh},
		{Name: "PG_HBA", Value: HBA},
		secretEnv(c.Name, "SUPERUSER_PASSWORD", KeySuperuserPassword),
		secretEnv(c.Name, "REPLICATION_PASSWORD", KeyReplicationPassword),
		secretEnv(c.Name, "APP_PASSWORD", KeyPassword),
	}
	mounts := []corev1.VolumeMount{{Name: "data", MountPath: instDir}}
	vols := []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: instDir, Type: api.Ptr(corev1.HostPathDirectoryOrCreate)}}}}
	if p.BackupPath != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: "backup", MountPath: p.BackupPath, ReadOnly: true})
		vols = append(vols, corev1.Volume{Name: "backup", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: p.BackupPath, Type: api.Ptr(corev1.HostPathDirectory)}}})
	}
	asPostgres := &corev1.SecurityContext{RunAsUser: api.Ptr(p.UID)}
	cmd := append([]string{filepath.Join(p.BinDir, "postgres"), "-D", pgdata},
		RenderParameters(c.Spec.Parameters, p.Instance, p.RWHost, filepath.Join(instDir, "pgpass"))...)
	pod := &corev1.Pod{
		ObjectMeta: api.ObjectMeta{
			Namespace: c.Namespace, Name: p.Instance,
			Labels:      map[string]string{LabelCluster: c.Name, LabelInstance: p.Instance, LabelRole: p.Role},
			Annotations: map[string]string{AnnotationConfigHash: p.ConfigHash},
		},
		Spec: corev1.PodSpec{
			NodeName:                      p.NodeName,
			Hostname:                      p.Instance,
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: api.Ptr(int64(10)),
			Affinity:                      spreadInstances(c.Name),
			Volumes:                       vols,
			InitContainers: []corev1.Container{
				{Name: "prepare", Image: "local/postgres:15", Command: []string{"/bin/sh", "-c", prepareScript},
					Env: env, VolumeMounts: mounts, SecurityContext: &corev1.SecurityContext{RunAsUser: api.Ptr(int64(0))}},
				{Name: "bootstrap", Image: "local/postgres:15", Command: []string{"/bin/sh", "-c", bootstrapScript},
					Env: env, VolumeMounts: mounts, SecurityContext: asPostgres},
			},
			Containers: []corev1.Container{{
				Name: "postgres", Image: "local/postgres:15", Command: cmd, Env: env[:3], VolumeMounts: mounts,
				SecurityContext: asPostgres, Resources: c.Spec.Resources,
				Ports: []corev1.ContainerPort{{Name: "postgres", ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", readinessScript}}},
					PeriodSeconds: 1, TimeoutSeconds: 3, FailureThreshold: 2, SuccessThreshold: 1,
				},
			}},
		},
	}
	return pod
}

// Service names.
func rwService(cluster string) string { return cluster + "-rw" }
func roService(cluster string) string { return cluster + "-ro" }
func rService(cluster string) string  { return cluster + "-r" }

// BuildServices returns the -rw (primary), -ro (replicas) and -r (any
// instance) Services of cluster.
func BuildServices(c *PostgresCluster) []*corev1.Service {
	mk := func(name string, sel map[string]string) *corev1.Service {
		sel[LabelCluster] = c.Name
		return &corev1.Service{
			ObjectMeta: api.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: map[string]string{LabelCluster: c.Name}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: sel, Ports: []corev1.ServicePort{{
				Name: "postgres", Port: Port, TargetPort: api.FromInt(Port), Protocol: corev1.ProtocolTCP}}},
		}
	}
	return []*corev1.Service{
		mk(rwService(c.Name), map[string]string{LabelRole: RolePrimary}),
		mk(roService(c.Name), map[string]string{LabelRole: RoleReplica}),
		mk(rService(c.Name), map[string]string{}),
	}
}

// BuildBackupJob returns the Job taking a plain-format base backup of the
// cluster behind rwHost into location/data.
func BuildBackupJob(b *PostgresBackup, cluster, rwHost, location, nodeName, binDir string, uid int64) *batchv1.Job {
	env := []corev1.EnvVar{
		{Name: "LOCATION", Value: location}, {Name: "RW_HOST", Value: rwHost}, {Name: "PG_BIN", Value: binDir},
		{Name: "PG_UID", Value: strconv.FormatInt(uid, 10)}, {Name: "LABEL", Value: b.Name},
		secretEnv(cluster, "PGPASSWORD", KeySuperuserPassword),
	}
	mounts := []corev1.VolumeMount{{Name: "backup", MountPath: location}}
	return &batchv1.Job{
		ObjectMeta: api.ObjectMeta{Namespace: b.Namespace, Name: b.Name + "-backup", Labels: map[string]string{LabelBackup: b.Name}},
		Spec: batchv1.JobSpec{
			BackoffLimit:          api.Ptr(int32(1)),
			ActiveDeadlineSeconds: api.Ptr(int64(3600)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{LabelBackup: b.Name}},
				Spec: corev1.PodSpec{
					NodeName:      nodeName,
					RestartPolicy: corev1.RestartPolicyNever,
					// A backup that is stopped has nothing to save, and its
					// shell (PID 1 of its container) ignores SIGTERM: the
					// deletion of a backup waits for this.
					TerminationGracePeriodSeconds: api.Ptr(int64(2)),
					Volumes: []corev1.Volume{{Name: "backup", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
						Path: location, Type: api.Ptr(corev1.HostPathDirectoryOrCreate)}}}},
					InitContainers: []corev1.Container{{Name: "prepare", Image: "local/postgres:15", Env: env, VolumeMounts: mounts,
						Command:         []string{"/bin/sh", "-c", `set -eu; rm -rf "$LOCATION/data"; chown "$PG_UID" "$LOCATION"; chmod 700 "$LOCATION"`},
						SecurityContext: &corev1.SecurityContext{RunAsUser: api.Ptr(int64(0))}}},
					Containers: []corev1.Container{{Name: "pg-basebackup", Image: "local/postgres:15", Env: env, VolumeMounts: mounts,
						Command: []string{"/bin/sh", "-c", `set -eu
"$PG_BIN/pg_basebackup" -h "$RW_HOST" -p 5432 -U postgres -D "$LOCATION/data" -X stream -c fast -w -l "$LABEL"
echo "backup complete: $(du -sb "$LOCATION/data" | cut -f1) bytes"`},
						SecurityContext: &corev1.SecurityContext{RunAsUser: api.Ptr(uid)}}},
				},
			},
		},
	}
}

// BuildCleanupPod returns a pod that removes target (recursively) on a node,
// as root. It mounts target's parent directory.
func BuildCleanupPod(namespace, name, target, nodeName string, labels map[string]string) *corev1.Pod {
	parent := filepath.Dir(target)
	return &corev1.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:      nodeName,
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Volumes: []corev1.Volume{{Name: "parent", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: parent, Type: api.Ptr(corev1.HostPathDirectoryOrCreate)}}}},
			Containers: []corev1.Container{{Name: "cleanup", Image: "local/postgres:15",
				Command:         []string{"/bin/rm", "-rf", "--", target},
				VolumeMounts:    []corev1.VolumeMount{{Name: "parent", MountPath: parent}},
				SecurityContext: &corev1.SecurityContext{RunAsUser: api.Ptr(int64(0))}}},
		},
	}
}
