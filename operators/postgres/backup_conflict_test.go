package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/operators/postgres"
)

// A backup's status write right after its Job is created can be lost to a
// conflict (a newer version of the backup was written meanwhile). What that
// write said must then follow from the Job: where the files are, and on
// which node, both to report the backup and to remove its files.
var _ = Describe("PostgresBackup whose status write after creating its Job conflicts", Ordered, func() {
	const cluster = "bk"

	BeforeAll(func(ctx SpecContext) { createCluster(ctx, cluster, 1) })

	AfterAll(func(ctx SpecContext) { deleteCluster(ctx, cluster) })

	It("completes with the location, job and node of its Job", func(ctx SpecContext) {
		const name = "bk-conflict"
		node := getCluster(ctx, cluster).Status.InstancesStatus[0].NodeName
		Expect(node).NotTo(BeEmpty())
		// The write is made to conflict once the operator's cache shows the
		// Job, so its next reconcile finds the Job instead of creating it.
		res := suite.conflicts.arm(backupStatusPath(name), afterJobCreated, func(ctx context.Context) error {
			if err := poll(ctx, func() error {
				return suite.cache.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-backup"}, &batchv1.Job{})
			}); err != nil {
				return fmt.Errorf("the operator's cache never showed the job: %w", err)
			}
			b := &postgres.PostgresBackup{}
			b.Name, b.Namespace = name, "default"
			return touch(ctx, b)
		})
		b := &postgres.PostgresBackup{Spec: postgres.BackupObjectSpec{Cluster: cluster}}
		b.Name, b.Namespace = name, "default"
		Expect(suite.c.Create(ctx, b)).To(Succeed())
		Eventually(res).WithTimeout(60*time.Second).Should(Receive(Equal(conflictResult{Code: http.StatusConflict})),
			"the status write after the Job's creation conflicts")

		waitCompleted(ctx, b)
		Expect(b.Status.Location).To(Equal(filepath.Join(suite.base, "backups", "default", name)))
		Expect(b.Status.Job).To(Equal(name + "-backup"))
		Expect(b.Status.NodeName).To(Equal(node))
		Expect(b.Status.StartedAt).NotTo(BeNil())
		Expect(b.Status.CompletedAt).NotTo(BeNil())
		Expect(b.Status.Size).To(BeNumerically(">", 1<<20))
		Expect(filepath.Join(b.Status.Location, "data", "PG_VERSION")).To(BeAnExistingFile())

		// Deleting it removes its files.
		loc := b.Status.Location
		Expect(suite.c.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { _, err := os.Stat(loc); return os.IsNotExist(err) }).WithTimeout(30 * time.Second).Should(BeTrue())
	})

	It("removes the files its Job wrote when it is deleted before its status names them", func(ctx SpecContext) {
		const name = "bk-conflict-deleted"
		loc := filepath.Join(suite.base, "backups", "default", name)
		// The concurrent write is the backup's deletion, once its Job has
		// written the backup: the operator next sees a deleted backup whose
		// status names no location.
		res := suite.conflicts.arm(backupStatusPath(name), afterJobCreated, func(ctx context.Context) error {
			if err := poll(ctx, func() error {
				job := &batchv1.Job{}
				if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-backup"}, job); err != nil {
					return err
				}
				if job.Status.Succeeded == 0 {
					return errors.New("job not complete")
				}
				_, err := os.Stat(filepath.Join(loc, "data", "PG_VERSION"))
				return err
			}); err != nil {
				return fmt.Errorf("the backup job never completed: %w", err)
			}
			b := &postgres.PostgresBackup{}
			b.Name, b.Namespace = name, "default"
			return suite.c.Delete(ctx, b)
		})
		b := &postgres.PostgresBackup{Spec: postgres.BackupObjectSpec{Cluster: cluster}}
		b.Name, b.Namespace = name, "default"
		Expect(suite.c.Create(ctx, b)).To(Succeed())
		Eventually(res).WithTimeout(90*time.Second).Should(Receive(Equal(conflictResult{Code: http.StatusConflict})),
			"the status write after the Job's creation conflicts")

		Eventually(func() bool {
			return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKeyFromObject(b), &postgres.PostgresBackup{}))
		}).WithTimeout(30 * time.Second).Should(BeTrue())
		Eventually(func() bool { _, err := os.Stat(loc); return os.IsNotExist(err) }).
			WithTimeout(30*time.Second).Should(BeTrue(), "the backup's directory %s is removed", loc)
	})
})

// backupStatusPath is the API path of the status of backup name in default.
func backupStatusPath(name string) string {
	return "/apis/" + postgres.GroupVersion.Group + "/" + postgres.GroupVersion.Version + "/namespaces/default/postgresbackups/" + name + "/status"
}

// afterJobCreated matches the status write that follows the Job's creation.
func afterJobCreated(body []byte) bool {
	var b postgres.PostgresBackup
	return json.Unmarshal(body, &b) == nil && b.Status.Job != "" && b.Status.Phase == postgres.BackupRunning
}
