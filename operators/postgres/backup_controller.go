package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

// BackupReconciler runs PostgresBackups as Jobs and removes their data when
// they are deleted.
type BackupReconciler struct {
	// Reader reads backups, their Jobs and the clusters' services from the
	// manager's cache (the services are watched by the cluster controller,
	// which Setup always adds beside this one).
	Reader client.Reader
	// Client writes, and reads the backup's cluster from the server (see
	// run).
	Client   *client.Client
	Recorder *record.Recorder
	Options  Options
	Now      func() time.Time
}

// BackupLocation is where backup name of namespace is stored on the node.
func (r *BackupReconciler) BackupLocation(namespace, name string) string {
	return filepath.Join(r.Options.BaseDir, "backups", namespace, name)
}

// Reconcile implements reconcile.Reconciler.
func (r *BackupReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	b := &PostgresBackup{}
	if err := r.Reader.Get(ctx, req.ObjectKey, b); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if b.DeletionTimestamp != nil {
		return r.finalize(ctx, b)
	}
	if controllerutil.AddFinalizer(b, BackupFinalizer) {
		if err := r.Client.Update(ctx, b); err != nil {
			return reconcile.Result{}, err
		}
	}
	switch b.Status.Phase {
	case BackupCompleted, BackupFailed:
		return reconcile.Result{}, nil
	}
	old := b.Status
	res, err := r.run(ctx, b)
	if b.Status != old {
		if uerr := r.Client.Status().Update(ctx, b); uerr != nil && err == nil {
			err = uerr
		}
	}
	return res, err
}

// finalize removes the files of backup b, being deleted, once nothing can
// write them any more, and only then releases b. Its Job goes first, in the
// foreground (the Job stays until its pods are gone), and no pod of it may
// be left: a Job still running, or a pod of it still stopping or starting
// late, would write its files (or recreate their directory) after they were
// removed. A pod that never stops (its node agent is gone) holds the
// deletion, as Kubernetes holds such a pod. The files are at the backup's
// own location: no other backup's data is touched.
func (r *BackupReconciler) finalize(ctx context.Context, b *PostgresBackup) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(b, BackupFinalizer) {
		return reconcile.Result{}, nil
	}
	again := reconcile.Result{RequeueAfter: time.Second}
	stopped, err := r.stopJob(ctx, b)
	if err != nil || !stopped {
		return again, err
	}
	if b.Status.Location != "" {
		done, err := runCleanup(ctx, r.Client, b, b.Name+"-cleanup", b.Status.Location, b.Status.NodeName)
		if err != nil || !done {
			return again, err
		}
	}
	controllerutil.RemoveFinalizer(b, BackupFinalizer)
	return reconcile.Result{}, r.Client.Update(ctx, b)
}

// stopJob deletes the Job of backup b, being deleted, and reports whether
// neither the Job nor any pod of it is left. It reads the server, not the
// cache: a Job created or a pod started a moment ago must not be missed.
//
// A lost status write may have left out where the Job writes: that is
// recorded (from the Job) before the Job is deleted, since nothing else
// would say where its files are once it is gone.
func (r *BackupReconciler) stopJob(ctx context.Context, b *PostgresBackup) (bool, error) {
	job := &batchv1.Job{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Name + "-backup"}, job)
	if client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("get backup job: %w", err)
	}
	if err == nil && controllerutil.IsControlledBy(job, b) {
		if b.Status.Location == "" {
			r.fromJob(b, job)
			if err := r.Client.Status().Update(ctx, b); err != nil {
				return false, fmt.Errorf("record the location of backup job %s: %w", job.Name, err)
			}
		}
		if job.DeletionTimestamp == nil {
			err := r.Client.Delete(ctx, job, client.PropagationPolicy(api.DeletePropagationForeground), client.Preconditions{UID: &job.UID})
			if client.IgnoreNotFound(err) != nil {
				return false, fmt.Errorf("delete backup job %s: %w", job.Name, err)
			}
			r.Recorder.Eventf(ctx, b, "Normal", "StoppingBackup", "deleting job %s before removing the backup's files", job.Name)
		}
		return false, nil
	}
	// The Job is gone, but its pods may outlive it (deleted by someone else
	// in the background, or orphaned): they carry the backup's label.
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(b.Namespace), client.MatchingLabels{LabelBackup: b.Name}); err != nil {
		return false, fmt.Errorf("list pods of backup job: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID}); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("delete backup pod %s: %w", p.Name, err)
		}
	}
	return len(pods.Items) == 0, nil
}

func (r *BackupReconciler) run(ctx context.Context, b *PostgresBackup) (reconcile.Result, error) {
	if b.Status.Phase == "" {
		b.Status.Phase = BackupPending
	}
	c := &PostgresCluster{}
	// The server, not the cache: a cluster missing here fails the backup
	// for good, which a cache lagging behind a new cluster must not decide.
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Cluster}, c); err != nil {
		if apierrors.IsNotFound(err) {
			b.Status.Phase, b.Status.Error = BackupFailed, "cluster "+b.Spec.Cluster+" not found"
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	job := &batchv1.Job{}
	jobName := b.Name + "-backup"
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: jobName}, job)
	if apierrors.IsNotFound(err) {
		primary := findStatus(c.Status.InstancesStatus, c.Status.CurrentPrimary)
		svc := &corev1.Service{}
		if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: rwService(c.Name)}, svc); err != nil ||
			primary == nil || !primary.Ready || svc.Spec.ClusterIP == "" {
			b.Status.Error = "waiting for the cluster's primary to be ready"
			return reconcile.Result{RequeueAfter: 2 * time.Second}, client.IgnoreNotFound(err)
		}
		loc := r.BackupLocation(b.Namespace, b.Name)
		job = BuildBackupJob(b, c.Name, svc.Spec.ClusterIP, loc, primary.NodeName, r.Options.BinDir, r.Options.UID)
		if err := controllerutil.SetControllerReference(b, job, r.Client.Scheme()); err != nil {
			return reconcile.Result{}, err
		}
		if err := r.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
			return reconcile.Result{}, fmt.Errorf("create job: %w", err)
		}
		b.Status.Phase, b.Status.Job, b.Status.Location, b.Status.NodeName, b.Status.Error = BackupRunning, jobName, loc, primary.NodeName, ""
		b.Status.StartedAt = &api.Time{Time: r.Now()}
		r.Recorder.Eventf(ctx, b, "Normal", "BackupStarted", "backing up %s from %s", c.Name, primary.Name)
		return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if b.Status.Location == "" {
		r.fromJob(b, job)
	}
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			b.Status.Phase = BackupCompleted
			b.Status.CompletedAt = &api.Time{Time: r.Now()}
			b.Status.Size = dirSize(filepath.Join(b.Status.Location, "data"))
			r.Recorder.Eventf(ctx, b, "Normal", "BackupCompleted", "backup stored in %s", b.Status.Location)
			return reconcile.Result{}, nil
		case batchv1.JobFailed:
			b.Status.Phase, b.Status.Error = BackupFailed, "job "+jobName+" failed: "+cond.Reason+": "+cond.Message
			b.Status.CompletedAt = &api.Time{Time: r.Now()}
			r.Recorder.Eventf(ctx, b, "Warning", "BackupFailed", "%s", b.Status.Error)
			return reconcile.Result{}, nil
		}
	}
	if job.Status.Succeeded > 0 {
		b.Status.Phase, b.Status.CompletedAt = BackupCompleted, &api.Time{Time: r.Now()}
		b.Status.Size = dirSize(filepath.Join(b.Status.Location, "data"))
		return reconcile.Result{}, nil
	}
	b.Status.Phase = BackupRunning
	return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
}

// fromJob records in b's status what the status write after the creation of
// job, b's backup Job, said. That write can be lost (a conflict with a newer
// version of the backup) while the Job runs: without this a completed backup
// named no location, and its files could never be found or removed.
func (r *BackupReconciler) fromJob(b *PostgresBackup, job *batchv1.Job) {
	b.Status.Job, b.Status.Location, b.Status.NodeName = job.Name, r.BackupLocation(b.Namespace, b.Name), job.Spec.Template.Spec.NodeName
	if b.Status.StartedAt == nil {
		b.Status.StartedAt = &api.Time{Time: job.CreationTimestamp.Time}
	}
}

// dirSize is the size of the files under dir when the operator can read it
// (it runs on the node), else 0.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
