package postgres_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/operators/postgres"
)

// A backup deleted while its Job runs must not leave files behind: the Job
// writes after any removal that does not wait for it, and a pod of it that
// starts late (a retry) recreates the backup's directory.
var _ = Describe("PostgresBackup deleted while its Job runs", Ordered, func() {
	const cluster = "bd"

	BeforeAll(func(ctx SpecContext) { createCluster(ctx, cluster, 1) })

	AfterAll(func(ctx SpecContext) { deleteCluster(ctx, cluster) })

	It("removes its files once no pod of its Job is left, keeping other backups' files", func(ctx SpecContext) {
		kept := createBackup(ctx, cluster, "bd-kept")
		keptFile := filepath.Join(kept.Status.Location, "data", "PG_VERSION")
		Expect(keptFile).To(BeAnExistingFile())

		// The backup's Job blocks in pg_basebackup, after it made the data
		// directory, until the primary's checkpointer runs again: a base
		// backup starts with a checkpoint.
		c := getCluster(ctx, cluster)
		dataDir := postgres.DataDir(filepath.Join(suite.base, "data", "default", cluster), c.Status.CurrentPrimary)
		checkpointer := childPID(postmasterPID(dataDir), "checkpointer")
		Expect(syscall.Kill(checkpointer, syscall.SIGSTOP)).To(Succeed())
		resume := func() { _ = syscall.Kill(checkpointer, syscall.SIGCONT) }
		DeferCleanup(resume)

		const name = "bd-deleted"
		loc := filepath.Join(suite.base, "backups", "default", name)
		b := &postgres.PostgresBackup{Spec: postgres.BackupObjectSpec{Cluster: cluster}}
		b.Name, b.Namespace = name, "default"
		// Another controller's finalizer keeps the backup (and so its Job,
		// were it left running) after the operator released it.
		const hold = "example.com/hold"
		b.Finalizers = []string{hold}
		Expect(suite.c.Create(ctx, b)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(poll(ctx, func() error {
				got := &postgres.PostgresBackup{}
				if err := suite.c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
					return err
				}
				got.Finalizers = slices.DeleteFunc(got.Finalizers, func(f string) bool { return f == hold })
				return suite.c.Update(ctx, got)
			}))).To(Succeed())
		})
		Eventually(func() (string, error) {
			return psqlSuper(ctx, cluster, "SELECT phase FROM pg_stat_progress_basebackup")
		}).WithTimeout(60*time.Second).Should(Equal("waiting for checkpoint to finish"), "pg_basebackup waits for the checkpoint")
		Expect(filepath.Join(loc, "data")).To(BeADirectory())

		Expect(suite.c.Delete(ctx, b)).To(Succeed())
		Eventually(func() ([]string, error) {
			err := suite.c.Get(ctx, client.ObjectKeyFromObject(b), b)
			return b.Finalizers, err
		}).WithTimeout(60*time.Second).ShouldNot(ContainElement(postgres.BackupFinalizer), "the operator releases the backup")
		// What could still write the backup's files once it was released.
		var left []string
		if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-backup"}, &batchv1.Job{}); err == nil {
			left = append(left, "job "+name+"-backup")
		}
		for _, p := range backupPods(ctx, name) {
			left = append(left, "pod "+p.Name+" ("+string(p.Status.Phase)+")")
		}

		// The checkpoint completes: a Job still there would go on (or retry)
		// and write the backup.
		resume()
		Eventually(func() error {
			job := &batchv1.Job{}
			err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-backup"}, job)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			for _, cond := range job.Status.Conditions {
				if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
					return nil
				}
			}
			return errors.New("job " + job.Name + " still runs")
		}).WithTimeout(90 * time.Second).Should(Succeed())
		Eventually(func() []string {
			var running []string
			for _, p := range backupPods(ctx, name) {
				if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					running = append(running, p.Name)
				}
			}
			return running
		}).WithTimeout(60 * time.Second).Should(BeEmpty())
		_, err := os.Stat(loc)
		Expect(os.IsNotExist(err)).To(BeTrue(), "the deleted backup's directory %s is gone (stat: %v)", loc, err)
		Expect(left).To(BeEmpty(), "nothing of the backup's Job is left when the operator releases it")
		Expect(keptFile).To(BeAnExistingFile(), "another backup's files are kept")

		Expect(suite.c.Delete(ctx, kept)).To(Succeed())
		Eventually(func() bool { _, err := os.Stat(kept.Status.Location); return os.IsNotExist(err) }).
			WithTimeout(30 * time.Second).Should(BeTrue())
	})
})

// backupPods are the pods of backup name's Job.
func backupPods(ctx context.Context, name string) []corev1.Pod {
	GinkgoHelper()
	list := &corev1.PodList{}
	Expect(suite.c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{postgres.LabelBackup: name})).To(Succeed())
	return list.Items
}
