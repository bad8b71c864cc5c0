package cronjob_test

import (
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("CronJob", func() {
	It("creates the Job of each schedule time and tracks active and successful runs", func(ctx SpecContext) {
		ns := namespace(ctx)
		cj := newCronJob(ns, "tick", nil)
		Expect(c.Create(ctx, cj)).To(Succeed())
		created := getCronJob(ctx, cj).CreationTimestamp.Time

		// One schedule time passes.
		first := created.Truncate(time.Minute).Add(time.Minute)
		clock.Set(first.Add(5 * time.Second))
		poke(ctx, cj)
		name := "tick-" + strconv.FormatInt(first.Unix()/60, 10)
		Eventually(func() []string { return jobNames(ctx, ns) }).Should(ConsistOf(name))

		j := &batchv1.Job{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j)).To(Succeed())
		Expect(j.Annotations).To(HaveKeyWithValue(batchv1.CronJobScheduledTimestampAnnotation, first.UTC().Format(time.RFC3339)))
		Expect(j.Labels).To(HaveKeyWithValue("cron", "tick"))
		Expect(j.OwnerReferences).To(ConsistOf(HaveField("UID", cj.UID)))
		Eventually(func() []string {
			var out []string
			for _, ref := range getCronJob(ctx, cj).Status.Active {
				out = append(out, ref.Name)
			}
			return out
		}).Should(ConsistOf(name))
		Expect(getCronJob(ctx, cj).Status.LastScheduleTime.Time).To(BeTemporally("==", first))

		completeJob(ctx, ns, name, batchv1.JobComplete)
		Eventually(func() bool {
			got := getCronJob(ctx, cj)
			return len(got.Status.Active) == 0 && got.Status.LastSuccessfulTime != nil
		}).Should(BeTrue())
		Eventually(func() []string { return events(ctx, cj) }).Should(ContainElements(
			"Normal/SuccessfulCreate: Created job "+name,
			"Normal/SawCompletedJob: Saw completed job: "+name+", condition: Complete"))
	})

	It("replaces the running Job with concurrencyPolicy Replace and keeps failedJobsHistoryLimit", func(ctx SpecContext) {
		ns := namespace(ctx)
		cj := newCronJob(ns, "rep", func(cj *batchv1.CronJob) {
			cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent
			cj.Spec.FailedJobsHistoryLimit = api.Ptr[int32](1)
		})
		Expect(c.Create(ctx, cj)).To(Succeed())
		base := getCronJob(ctx, cj).CreationTimestamp.Time.Truncate(time.Minute)
		at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
		nameAt := func(m int) string { return "rep-" + strconv.FormatInt(at(m).Unix()/60, 10) }

		clock.Set(at(1).Add(time.Second))
		poke(ctx, cj)
		Eventually(func() []string { return jobNames(ctx, ns) }).Should(ConsistOf(nameAt(1)))
		// The next schedule comes once the controller knows the Job runs (a
		// real schedule is a minute later; the fake clock is not): under load
		// its caches could still lack it, and Replace would find nothing to
		// replace.
		Eventually(func() []string {
			var active []string
			for _, ref := range getCronJob(ctx, cj).Status.Active {
				active = append(active, ref.Name)
			}
			return active
		}).Should(ConsistOf(nameAt(1)))
		clock.Set(at(2).Add(time.Second))
		poke(ctx, cj)
		Eventually(func() []string { return jobNames(ctx, ns) }).Should(ConsistOf(nameAt(2)))
		Eventually(func() []string { return events(ctx, cj) }).Should(ContainElement("Normal/SuccessfulDelete: Deleted job " + nameAt(1)))

		// Two failed runs: only the newest stays.
		completeJob(ctx, ns, nameAt(2), batchv1.JobFailed)
		// Once the controller has seen the Job finish it is no longer active;
		// before, Replace would (rightly) delete it as the running Job.
		Eventually(func() int { return len(getCronJob(ctx, cj).Status.Active) }).Should(BeZero())
		clock.Set(at(3).Add(time.Second))
		poke(ctx, cj)
		Eventually(func() []string { return jobNames(ctx, ns) }).Should(ConsistOf(nameAt(2), nameAt(3)))
		completeJob(ctx, ns, nameAt(3), batchv1.JobFailed)
		Eventually(func() []string { return jobNames(ctx, ns) }).Should(ConsistOf(nameAt(3)))
	})

	It("creates nothing while suspended", func(ctx SpecContext) {
		ns := namespace(ctx)
		cj := newCronJob(ns, "sleepy", func(cj *batchv1.CronJob) { cj.Spec.Suspend = api.Ptr(true) })
		Expect(c.Create(ctx, cj)).To(Succeed())
		clock.Set(getCronJob(ctx, cj).CreationTimestamp.Time.Add(3 * time.Minute))
		poke(ctx, cj)
		Consistently(func() []string { return jobNames(ctx, ns) }, "500ms").Should(BeEmpty())
	})

	It("adopts a running Job it did not create (UnexpectedJob) and drops it once missing (MissingJob)", func(ctx SpecContext) {
		ns := namespace(ctx)
		cj := newCronJob(ns, "adopt", func(cj *batchv1.CronJob) { cj.Spec.Suspend = api.Ptr(true) })
		Expect(c.Create(ctx, cj)).To(Succeed())
		cj = getCronJob(ctx, cj)
		j := &batchv1.Job{
			ObjectMeta: api.ObjectMeta{Name: "manual", Namespace: ns, OwnerReferences: []api.OwnerReference{{
				APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: api.Ptr(true)}}},
			Spec: cj.Spec.JobTemplate.Spec,
		}
		Expect(c.Create(ctx, j)).To(Succeed())
		poke(ctx, cj)
		Eventually(func() []string {
			var out []string
			for _, ref := range getCronJob(ctx, cj).Status.Active {
				out = append(out, ref.Name)
			}
			return out
		}).Should(ConsistOf("manual"))
		Eventually(func() []string { return events(ctx, cj) }).Should(ContainElement(
			"Warning/UnexpectedJob: Saw a job that the controller did not create or forgot: manual"))
		// Gone without finishing: dropped from status.active.
		Expect(c.Delete(ctx, j)).To(Succeed())
		poke(ctx, cj)
		Eventually(func() int { return len(getCronJob(ctx, cj).Status.Active) }).Should(BeZero())
		Eventually(func() []string { return events(ctx, cj) }).Should(ContainElement("Normal/MissingJob: Active job went missing: manual"))
	})
})
