package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/operators/postgres"
)

func newCluster(name string, instances int32) *postgres.PostgresCluster {
	c := &postgres.PostgresCluster{Spec: postgres.ClusterSpec{Instances: instances}}
	c.Name, c.Namespace = name, "default"
	return c
}

var _ = Describe("PostgresCluster validation", func() {
	It("rejects bad specs with 422 from the schema and CEL rules", func(ctx SpecContext) {
		bad := newCluster("bad", 0)
		bad.Spec.Instances = 0
		raw := &api.Unstructured{Object: map[string]any{"apiVersion": "postgres.converge.dev/v1alpha1", "kind": "PostgresCluster",
			"metadata": map[string]any{"namespace": "default", "name": "bad"}, "spec": map[string]any{"instances": 0}}}
		err := suite.c.Create(ctx, raw)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "instances 0: %v", err)

		raw.Object["spec"] = map[string]any{"instances": 10}
		Expect(apierrors.IsInvalid(suite.c.Create(ctx, raw))).To(BeTrue(), "instances 10")

		raw.Object["spec"] = map[string]any{"postgresVersion": 16}
		err = suite.c.Create(ctx, raw)
		Expect(apierrors.IsInvalid(err)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("only PostgreSQL 15 is supported"))

		raw.Object["spec"] = map[string]any{"parameters": map[string]any{"port": "6000"}}
		err = suite.c.Create(ctx, raw)
		Expect(apierrors.IsInvalid(err)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("managed by the operator"))

		raw.Object["spec"] = map[string]any{"backup": map[string]any{"schedule": "every day"}}
		Expect(apierrors.IsInvalid(suite.c.Create(ctx, raw))).To(BeTrue(), "bad schedule")
		raw.Object["spec"] = map[string]any{"backup": map[string]any{"retentionPolicy": "30 days"}}
		Expect(apierrors.IsInvalid(suite.c.Create(ctx, raw))).To(BeTrue(), "bad retention policy")

		raw.Object["spec"] = map[string]any{"bootstrap": map[string]any{"initdb": map[string]any{}, "recovery": map[string]any{"backup": "x"}}}
		Expect(apierrors.IsInvalid(suite.c.Create(ctx, raw))).To(BeTrue(), "initdb and recovery")
	})
})

var _ = Describe("PostgresCluster", Ordered, func() {
	const name = "pg"
	var primaryBefore, finalBackup string

	It("creates a 3-instance cluster that becomes Ready within 60 s", func(ctx SpecContext) {
		c := newCluster(name, 3)
		c.Spec.SynchronousReplication = true
		c.Spec.Bootstrap = &postgres.BootstrapSpec{InitDB: &postgres.InitDBSpec{Database: "shop", Owner: "shopper"}}
		start := time.Now()
		Expect(suite.c.Create(ctx, c)).To(Succeed())
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(healthy(3))
		GinkgoWriter.Printf("3 instances ready in %s\n", time.Since(start).Round(time.Millisecond))

		c = getCluster(ctx, name)
		Expect(c.Status.CurrentPrimary).To(Equal("pg-1"))
		Expect(c.Spec.PostgresVersion).To(BeEquivalentTo(15), "defaulted")
		Expect(c.Spec.PrimaryUpdateStrategy).To(Equal(postgres.Unsupervised), "defaulted")
		roles := map[string]string{}
		for _, is := range c.Status.InstancesStatus {
			roles[is.Name] = is.Role
			Expect(is.LSN).NotTo(BeEmpty())
		}
		Expect(roles).To(Equal(map[string]string{"pg-1": "primary", "pg-2": "replica", "pg-3": "replica"}))
		for _, svc := range []string{"pg-rw", "pg-ro", "pg-r"} {
			s := &corev1.Service{}
			Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: svc}, s)).To(Succeed())
			Expect(s.OwnerReferences).To(HaveLen(1))
		}
		sec := secret(ctx, name)
		Expect(sec).To(HaveKeyWithValue("username", "shopper"))
		Expect(sec).To(HaveKeyWithValue("dbname", "shop"))

		out, err := kubectl("get", "postgresclusters")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring("PRIMARY"))
		Expect(out).To(MatchRegexp(`pg\s+3\s+3\s+pg-1\s+Healthy`))
	})

	It("rejects a change of an immutable field", func(ctx SpecContext) {
		c := getCluster(ctx, name)
		c.Spec.Bootstrap.InitDB.Database = "other"
		err := suite.c.Update(ctx, c)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("bootstrap is immutable"))
		c = getCluster(ctx, name)
		c.Spec.PostgresVersion = 16
		Expect(apierrors.IsInvalid(suite.c.Update(ctx, c))).To(BeTrue())
	})

	It("writes through -rw and reads through -ro", func(ctx SpecContext) {
		Eventually(func() error {
			_, err := psql(ctx, name, "pg-rw", "CREATE TABLE IF NOT EXISTS items (id int primary key, v text)")
			return err
		}).WithTimeout(20 * time.Second).Should(Succeed())
		_, err := psql(ctx, name, "pg-rw", "INSERT INTO items SELECT g, 'v' || g FROM generate_series(1, 100) g")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() (string, error) { return psql(ctx, name, "pg-ro", "SELECT count(*) FROM items") }).
			WithTimeout(10 * time.Second).Should(Equal("100"))
		Expect(psql(ctx, name, "pg-ro", "SELECT pg_is_in_recovery()")).To(Equal("t"))
		Expect(psql(ctx, name, "pg-rw", "SELECT pg_is_in_recovery()")).To(Equal("f"))
	})

	It("fails over within 30 s when the primary's postgres is killed, losing no acknowledged row", func(ctx SpecContext) {
		c := getCluster(ctx, name)
		primaryBefore = c.Status.CurrentPrimary
		pid := postmasterPID(postgres.DataDir(filepath.Join(suite.base, "data", "default", name), primaryBefore))
		// Acknowledged with synchronous replication right before the crash.
		_, err := psql(ctx, name, "pg-rw", "INSERT INTO items VALUES (101, 'last')")
		Expect(err).NotTo(HaveOccurred())
		start := time.Now()
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Equal(primaryBefore))
		Eventually(func() (string, error) { return psql(ctx, name, "pg-rw", "SELECT pg_is_in_recovery()") }).
			WithTimeout(30 * time.Second).Should(Equal("f"))
		GinkgoWriter.Printf("new primary %s serving after %s\n", getCluster(ctx, name).Status.CurrentPrimary, time.Since(start).Round(time.Millisecond))
		Expect(psql(ctx, name, "pg-rw", "SELECT count(*) FROM items")).To(Equal("101"))
		_, err = psql(ctx, name, "pg-rw", "INSERT INTO items VALUES (102, 'after failover')")
		Expect(err).NotTo(HaveOccurred())
		// The old primary rejoins as a replica.
		Eventually(clusterFn(ctx, name)).WithTimeout(60 * time.Second).Should(healthy(3))
		c = getCluster(ctx, name)
		for _, is := range c.Status.InstancesStatus {
			if is.Name == primaryBefore {
				Expect(is.Role).To(Equal("replica"))
			}
		}
	})

	It("scales 3 → 1 → 2 with kubectl scale, never removing the primary", func(ctx SpecContext) {
		primary := getCluster(ctx, name).Status.CurrentPrimary
		out, err := kubectl("scale", "postgrescluster/"+name, "--replicas=1")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(clusterFn(ctx, name)).WithTimeout(30 * time.Second).Should(healthy(1))
		c := getCluster(ctx, name)
		Expect(c.Status.CurrentPrimary).To(Equal(primary))
		Expect(c.Status.InstancesStatus).To(HaveLen(1))
		// Synchronous replication is relaxed with no replica: writes still work.
		_, err = psql(ctx, name, "pg-rw", "INSERT INTO items VALUES (103, 'alone')")
		Expect(err).NotTo(HaveOccurred())

		out, err = kubectl("scale", "postgrescluster/"+name, "--replicas=2")
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(clusterFn(ctx, name)).WithTimeout(45 * time.Second).Should(healthy(2))
		Eventually(func() (string, error) { return psql(ctx, name, "pg-ro", "SELECT count(*) FROM items") }).
			WithTimeout(10 * time.Second).Should(Equal("103"))
	})

	It("switches over to the instance named in spec.primary", func(ctx SpecContext) {
		c := getCluster(ctx, name)
		var target string
		for _, is := range c.Status.InstancesStatus {
			if is.Name != c.Status.CurrentPrimary {
				target = is.Name
			}
		}
		Expect(target).NotTo(BeEmpty())
		c.Spec.Primary = target
		Expect(suite.c.Update(ctx, c)).To(Succeed())
		Eventually(func() string { return getCluster(ctx, name).Status.CurrentPrimary }).WithTimeout(30 * time.Second).Should(Equal(target))
		Eventually(clusterFn(ctx, name)).WithTimeout(45 * time.Second).Should(healthy(2))
		Eventually(func() (string, error) { return psql(ctx, name, "pg-rw", "SELECT count(*) FROM items") }).
			WithTimeout(15 * time.Second).Should(Equal("103"))
	})

	It("rolls a parameter change out to every instance, the primary last (Unsupervised)", func(ctx SpecContext) {
		c := getCluster(ctx, name)
		c.Spec.Parameters = map[string]string{"work_mem": "8MB"}
		Expect(suite.c.Update(ctx, c)).To(Succeed())
		Eventually(func() (string, error) { return psql(ctx, name, "pg-rw", "SHOW work_mem") }).
			WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Equal("8MB"))
		Eventually(func() (string, error) { return psql(ctx, name, "pg-ro", "SHOW work_mem") }).
			WithTimeout(30 * time.Second).Should(Equal("8MB"))
		Eventually(clusterFn(ctx, name)).WithTimeout(45 * time.Second).Should(healthy(2))
		Expect(psql(ctx, name, "pg-rw", "SELECT count(*) FROM items")).To(Equal("103"))
	})

	It("backs up on demand and restores the backup into a new cluster", func(ctx SpecContext) {
		b := createBackup(ctx, name, "pg-backup-1")
		Expect(b.Status.StartedAt).NotTo(BeNil())
		Expect(b.Status.CompletedAt).NotTo(BeNil())
		Expect(b.Status.Size).To(BeNumerically(">", 1<<20))
		Expect(filepath.Join(b.Status.Location, "data", "PG_VERSION")).To(BeAnExistingFile())
		Eventually(func() *api.Time { return getCluster(ctx, name).Status.LastSuccessfulBackup }).ShouldNot(BeNil())

		r := newCluster("restored", 1)
		r.Spec.Bootstrap = &postgres.BootstrapSpec{Recovery: &postgres.RecoverySpec{Backup: b.Name, Database: "shop", Owner: "shopper"}}
		// The next specs use the restored cluster's schedule, retention and final backup.
		r.Spec.Backup = &postgres.BackupSpec{Schedule: "@every 2s", RetentionPolicy: "1h", FinalBackup: true}
		// The application role of the source is "shopper" in database "shop":
		// the restored cluster's Secret must say so for its password to be reset.
		Expect(suite.c.Create(ctx, r)).To(Succeed())
		Eventually(clusterFn(ctx, "restored")).WithTimeout(60 * time.Second).Should(healthy(1))
		Eventually(func() (string, error) {
			return psql(ctx, "restored", "restored-rw", "SELECT count(*) FROM items")
		}).WithTimeout(20 * time.Second).Should(Equal("103"))
	})

	It("takes scheduled backups and deletes the expired ones with their files", func(ctx SpecContext) {
		var first []postgres.PostgresBackup
		Eventually(func() []postgres.PostgresBackup {
			first = backupsOf(ctx, "restored", postgres.BackupKindScheduled, postgres.BackupCompleted)
			return first
		}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).
			ShouldNot(BeEmpty())
		for _, b := range first {
			Expect(b.OwnerReferences).To(BeEmpty(), "backups outlive their cluster")
			Expect(filepath.Join(b.Status.Location, "data", "PG_VERSION")).To(BeAnExistingFile())
		}
		// The cluster's status follows its backups' (a conflicting write is retried).
		Eventually(func() any { return getCluster(ctx, "restored").Status.LastScheduledBackup }).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).ShouldNot(BeNil())

		// Two hours later every backup taken so far is past the 1h retention;
		// each goes (with its directory) once a newer one has completed.
		advanceClock(2 * time.Hour)
		seen := map[string]bool{}
		for _, b := range first {
			seen[b.Name] = true
		}
		Eventually(func() []string {
			var fresh []string
			for _, b := range backupsOf(ctx, "restored", postgres.BackupKindScheduled) {
				if !seen[b.Name] {
					fresh = append(fresh, b.Name)
				}
			}
			return fresh
		}).WithTimeout(15*time.Second).ShouldNot(BeEmpty(), "the schedule fires again")
		// Stop the schedule (retention goes on) so the cluster is deleted
		// with no scheduled backup running.
		Eventually(func() error {
			c := getCluster(ctx, "restored")
			c.Spec.Backup.Schedule = ""
			return suite.c.Update(ctx, c)
		}).Should(Succeed())
		for _, b := range first {
			Eventually(func() bool {
				return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKeyFromObject(&b), &postgres.PostgresBackup{}))
			}).WithTimeout(30*time.Second).Should(BeTrue(), "backup %s", b.Name)
			Eventually(func() bool { _, err := os.Stat(b.Status.Location); return os.IsNotExist(err) }).
				WithTimeout(15*time.Second).Should(BeTrue(), "directory of %s", b.Name)
		}
		// What is left is newer, and the newest completed backup is kept.
		kept := backupsOf(ctx, "restored", postgres.BackupKindScheduled, postgres.BackupCompleted)
		Expect(kept).NotTo(BeEmpty())
		for _, b := range kept {
			Expect(seen).NotTo(HaveKey(b.Name))
		}
		Expect(backupsOf(ctx, "restored", postgres.BackupKindScheduled, postgres.BackupPending, postgres.BackupRunning, "")).To(BeEmpty())
	})

	It("deletes the cluster: children gone, data directories removed, the final backup kept", func(ctx SpecContext) {
		root := filepath.Join(suite.base, "data", "default", name)
		Expect(root).To(BeADirectory())
		for _, n := range []string{name, "restored"} {
			Expect(suite.c.Delete(ctx, newCluster(n, 1))).To(Succeed())
		}
		for _, n := range []string{name, "restored"} {
			Eventually(func() bool {
				return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: n}, &postgres.PostgresCluster{}))
			}).WithTimeout(60*time.Second).Should(BeTrue(), n)
		}
		_, err := os.Stat(root)
		Expect(os.IsNotExist(err)).To(BeTrue(), "data dir %s: %v", root, err)
		Eventually(func() []string {
			var left []string
			pods := &corev1.PodList{}
			Expect(suite.c.List(ctx, pods, client.InNamespace("default"))).To(Succeed())
			for _, p := range pods.Items {
				if strings.HasPrefix(p.Name, name+"-") && !strings.Contains(p.Name, "backup") {
					left = append(left, "pod/"+p.Name)
				}
			}
			svcs := &corev1.ServiceList{}
			Expect(suite.c.List(ctx, svcs, client.InNamespace("default"))).To(Succeed())
			for _, s := range svcs.Items {
				if strings.HasPrefix(s.Name, name+"-") {
					left = append(left, "service/"+s.Name)
				}
			}
			if err := suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: postgres.SecretName(name)}, &corev1.Secret{}); err == nil {
				left = append(left, "secret")
			}
			return left
		}).WithTimeout(30 * time.Second).Should(BeEmpty())

		// The restored cluster asked for a final backup: taken before its data
		// went, not owned by the cluster, so still there.
		_, err = os.Stat(filepath.Join(suite.base, "data", "default", "restored"))
		Expect(os.IsNotExist(err)).To(BeTrue(), "data dir of restored: %v", err)
		final := backupsOf(ctx, "restored", postgres.BackupKindFinal)
		Expect(final).To(HaveLen(1))
		Expect(final[0].Status.Phase).To(Equal(postgres.BackupCompleted), "%+v", final[0].Status)
		Expect(final[0].OwnerReferences).To(BeEmpty())
		Expect(filepath.Join(final[0].Status.Location, "data", "PG_VERSION")).To(BeAnExistingFile())
		finalBackup = final[0].Name

		// Deleting the backup removes its directory.
		b := &postgres.PostgresBackup{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "pg-backup-1"}, b)).To(Succeed())
		loc := b.Status.Location
		Expect(suite.c.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { _, err := os.Stat(loc); return os.IsNotExist(err) }).WithTimeout(30 * time.Second).Should(BeTrue())
	})

	It("restores the final backup into a new cluster", func(ctx SpecContext) {
		Expect(finalBackup).NotTo(BeEmpty())
		c := newCluster("again", 1)
		c.Spec.Bootstrap = &postgres.BootstrapSpec{Recovery: &postgres.RecoverySpec{Backup: finalBackup, Database: "shop", Owner: "shopper"}}
		Expect(suite.c.Create(ctx, c)).To(Succeed())
		Eventually(clusterFn(ctx, "again")).WithTimeout(60 * time.Second).Should(healthy(1))
		Eventually(func() (string, error) { return psql(ctx, "again", "again-rw", "SELECT count(*) FROM items") }).
			WithTimeout(20 * time.Second).Should(Equal("103"))

		// Clean up: the cluster, then every backup left (and their directories).
		Expect(suite.c.Delete(ctx, c)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(suite.c.Get(ctx, client.ObjectKeyFromObject(c), &postgres.PostgresCluster{}))
		}).WithTimeout(30 * time.Second).Should(BeTrue())
		left := backupsOf(ctx, "restored", "")
		for i := range left {
			Expect(client.IgnoreNotFound(suite.c.Delete(ctx, &left[i]))).To(Succeed())
		}
		for _, b := range left {
			Eventually(func() bool { _, err := os.Stat(b.Status.Location); return os.IsNotExist(err) }).
				WithTimeout(30*time.Second).Should(BeTrue(), "directory of %s", b.Name)
		}
	})
})

// backupsOf lists the backups of cluster of the given kind ("" for any) in
// one of phases (any when none is given).
func backupsOf(ctx context.Context, cluster, kind string, phases ...string) []postgres.PostgresBackup {
	GinkgoHelper()
	list := &postgres.PostgresBackupList{}
	Expect(suite.c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{postgres.LabelCluster: cluster})).To(Succeed())
	var out []postgres.PostgresBackup
	for _, b := range list.Items {
		if b.DeletionTimestamp != nil || (kind != "" && b.Labels[postgres.LabelBackupKind] != kind) ||
			(len(phases) > 0 && !slices.Contains(phases, b.Status.Phase)) {
			continue
		}
		out = append(out, b)
	}
	return out
}
