package job_test

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Job", func() {
	It("runs parallelism pods until completions succeeded, then completes", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "pi", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](2), api.Ptr[int32](3)
		})
		Expect(c.Create(ctx, j)).To(Succeed())

		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
		p := livePods(ctx, j)[0]
		Expect(p.GenerateName).To(Equal("pi-"))
		Expect(p.Labels).To(HaveKeyWithValue(batchv1.ControllerUIDLabel, j.UID))
		Expect(p.OwnerReferences).To(ConsistOf(HaveField("UID", j.UID)))
		Expect(*p.OwnerReferences[0].Controller).To(BeTrue())
		Eventually(func() int32 { return getJob(ctx, j).Status.Active }).Should(Equal(int32(2)))
		Expect(getJob(ctx, j).Status.StartTime).NotTo(BeNil())

		runPod(ctx, p, true)
		Eventually(func() int32 { return *getJob(ctx, j).Status.Ready }).Should(Equal(int32(1)))

		// Each success leaves min(parallelism, remaining) pods running.
		for _, want := range []int{2, 1} {
			finishPod(ctx, livePods(ctx, j)[0], 0)
			Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(want))
		}
		finishPod(ctx, livePods(ctx, j)[0], 0)
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)).Should(BeTrue())
		got := getJob(ctx, j)
		Expect(got.Status.Succeeded).To(Equal(int32(3)))
		Expect(got.Status.Active).To(BeZero())
		Expect(got.Status.CompletionTime).NotTo(BeNil())
		Expect(condition(got, batchv1.JobSuccessCriteriaMet)).NotTo(BeNil())
		Eventually(func() []string { return events(ctx, got) }).Should(ContainElements(
			HavePrefix("Normal/SuccessfulCreate: Created pod: pi-"), "Normal/Completed: Job completed"))
	})

	It("adopts a matching orphan and releases a pod that no longer matches", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "adopt", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](1), api.Ptr[int32](2)
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		p := livePods(ctx, j)[0]
		key := client.ObjectKeyFromObject(&p)

		By("orphaning the pod: the Job adopts it again")
		p.OwnerReferences = nil
		Expect(c.Update(ctx, &p)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.Pod{}
			g.Expect(c.Get(ctx, key, got)).To(Succeed())
			g.Expect(got.OwnerReferences).To(ConsistOf(And(HaveField("UID", j.UID), HaveField("Kind", "Job"), HaveField("Controller", HaveValue(BeTrue())))))
		}).Should(Succeed())

		By("removing its labels: the Job releases it")
		Expect(c.Get(ctx, key, &p)).To(Succeed())
		p.Labels = nil
		Expect(c.Update(ctx, &p)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.Pod{}
			g.Expect(c.Get(ctx, key, got)).To(Succeed())
			g.Expect(got.OwnerReferences).To(BeEmpty())
		}).Should(Succeed())
	})

	It("gives Indexed pods their completion index and tracks completedIndexes", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "idx", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](3), api.Ptr[int32](3)
			j.Spec.CompletionMode = api.Ptr(batchv1.IndexedCompletion)
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(3))
		var idx []string
		for _, p := range livePods(ctx, j) {
			i := p.Annotations[batchv1.JobCompletionIndexAnnotation]
			idx = append(idx, i)
			Expect(p.Labels).To(HaveKeyWithValue(batchv1.JobCompletionIndexAnnotation, i))
			Expect(p.GenerateName).To(Equal("idx-" + i + "-"))
			Expect(p.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", Value: i}))
		}
		slices.Sort(idx)
		Expect(idx).To(Equal([]string{"0", "1", "2"}))

		byIndex := func(i int) corev1.Pod {
			for _, p := range livePods(ctx, j) {
				if p.Annotations[batchv1.JobCompletionIndexAnnotation] == strconv.Itoa(i) {
					return p
				}
			}
			Fail("no live pod for index " + strconv.Itoa(i))
			return corev1.Pod{}
		}
		finishPod(ctx, byIndex(0), 0)
		finishPod(ctx, byIndex(2), 0)
		Eventually(func() string { return getJob(ctx, j).Status.CompletedIndexes }).Should(Equal("0,2"))
		// A failed index is retried with a new pod of the same index.
		finishPod(ctx, byIndex(1), 3)
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		Expect(livePods(ctx, j)[0].Annotations).To(HaveKeyWithValue(batchv1.JobCompletionIndexAnnotation, "1"))
		finishPod(ctx, byIndex(1), 0)
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, "")).Should(BeTrue())
		got := getJob(ctx, j)
		Expect(got.Status.CompletedIndexes).To(Equal("0-2"))
		Expect(got.Status.Failed).To(Equal(int32(1)))
	})

	It("fails with BackoffLimitExceeded after backoffLimit failures", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "flaky", func(j *batchv1.Job) { j.Spec.BackoffLimit = api.Ptr[int32](1) })
		Expect(c.Create(ctx, j)).To(Succeed())
		for range 2 {
			Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
			finishPod(ctx, livePods(ctx, j)[0], 1)
		}
		Eventually(hasCondition(ctx, j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)).Should(BeTrue())
		got := getJob(ctx, j)
		Expect(got.Status.Failed).To(Equal(int32(2)))
		Expect(condition(got, batchv1.JobFailureTarget)).NotTo(BeNil())
		Expect(livePods(ctx, j)).To(BeEmpty())
		Eventually(func() []string { return events(ctx, got) }).Should(ContainElement(
			"Warning/BackoffLimitExceeded: Job has reached the specified backoff limit"))
	})

	It("applies podFailurePolicy Ignore and FailJob rules on exit codes", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "pfp", func(j *batchv1.Job) {
			j.Spec.BackoffLimit = api.Ptr[int32](0)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{137}}},
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: api.Ptr("main"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
			}}
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		// Ignored: not counted, replaced although backoffLimit is 0.
		finishPod(ctx, livePods(ctx, j)[0], 137)
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		Expect(getJob(ctx, j).Status.Failed).To(BeZero())
		finishPod(ctx, livePods(ctx, j)[0], 42)
		Eventually(hasCondition(ctx, j, batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy)).Should(BeTrue())
		Expect(condition(getJob(ctx, j), batchv1.JobFailed).Message).To(ContainSubstring(
			"Container main for pod " + ns + "/pfp-"))
		Expect(condition(getJob(ctx, j), batchv1.JobFailed).Message).To(ContainSubstring("failed with exit code 42 matching FailJob rule at index 1"))
	})

	It("fails with DeadlineExceeded after activeDeadlineSeconds and deletes active pods", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "slow", func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = api.Ptr[int64](1) })
		Expect(c.Create(ctx, j)).To(Succeed())
		// startTime has whole seconds: the pod may live much less than 1 s.
		Eventually(func() []string { return events(ctx, j) }).Should(ContainElement(HavePrefix("Normal/SuccessfulCreate: Created pod: slow-")))
		Eventually(hasCondition(ctx, j, batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded), "5s").Should(BeTrue())
		Expect(pods(ctx, j)).To(BeEmpty())
		Eventually(func() []string { return events(ctx, j) }).Should(ContainElement(
			"Warning/DeadlineExceeded: Job was active longer than specified deadline"))
	})

	It("deletes active pods while suspended and recreates them on resume", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "sus", func(j *batchv1.Job) { j.Spec.Parallelism = api.Ptr[int32](2) })
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
		for _, p := range livePods(ctx, j) {
			runPod(ctx, p, true)
		}
		Eventually(func() *int32 { return getJob(ctx, j).Status.Ready }).Should(HaveValue(Equal(int32(2))))
		Expect(getJob(ctx, j).Status.StartTime).NotTo(BeNil())

		patch := func(suspend bool) {
			cur := getJob(ctx, j)
			body := fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)
			Expect(c.Patch(ctx, cur, client.RawPatch(client.MergePatchType, []byte(body)))).To(Succeed())
		}
		patch(true)
		Eventually(hasCondition(ctx, j, batchv1.JobSuspended, "JobSuspended")).Should(BeTrue())
		Eventually(func() int { return len(pods(ctx, j)) }).Should(BeZero())
		// The ready pods deleted leave status.ready with status.active, and a
		// suspended Job has no startTime (Kubernetes clears it).
		got := getJob(ctx, j)
		Expect(got.Status.Active).To(BeZero())
		Expect(got.Status.Ready).To(HaveValue(BeZero()))
		Expect(got.Status.StartTime).To(BeNil())

		resumed := time.Now().Truncate(time.Second) // startTime has whole seconds
		patch(false)
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
		Eventually(func() corev1.ConditionStatus { return condition(getJob(ctx, j), batchv1.JobSuspended).Status }).
			Should(Equal(corev1.ConditionFalse))
		// Resuming starts the Job afresh.
		got = getJob(ctx, j)
		Expect(got.Status.StartTime).NotTo(BeNil())
		Expect(got.Status.StartTime.Time).NotTo(BeTemporally("<", resumed))
		Eventually(func() []string { return events(ctx, j) }).Should(ContainElements(
			"Normal/Suspended: Job suspended", "Normal/Resumed: Job resumed"))
	})

	It("completes a Job with completions 0 at once, with startTime and completionTime", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "zero", func(j *batchv1.Job) { j.Spec.Completions = api.Ptr[int32](0) })
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)).Should(BeTrue())
		got := getJob(ctx, j)
		Expect(got.Status.StartTime).NotTo(BeNil())
		Expect(got.Status.CompletionTime).NotTo(BeNil())
		Expect(got.Status.CompletionTime.Time).NotTo(BeTemporally("<", got.Status.StartTime.Time))
		Expect(got.Status.Succeeded).To(BeZero())
		Expect(condition(got, batchv1.JobSuccessCriteriaMet)).NotTo(BeNil())
		Expect(pods(ctx, j)).To(BeEmpty())
	})

	It("deletes a finished Job after ttlSecondsAfterFinished", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "ttl", func(j *batchv1.Job) { j.Spec.TTLSecondsAfterFinished = api.Ptr[int32](0) })
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		finishPod(ctx, livePods(ctx, j)[0], 0)
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(j), &batchv1.Job{}))
		}).Should(BeTrue())
	})
})
