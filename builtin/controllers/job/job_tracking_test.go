package job_test

import (
	"context"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// counts is what a test checks of a Job's counters.
type counts struct {
	Succeeded, Failed int32
	Uncounted         int
}

func jobCounts(ctx context.Context, j *batchv1.Job) func() counts {
	return func() counts {
		st := getJob(ctx, j).Status
		n := counts{Succeeded: st.Succeeded, Failed: st.Failed}
		if u := st.UncountedTerminatedPods; u != nil {
			n.Uncounted = len(u.Succeeded) + len(u.Failed)
		}
		return n
	}
}

func deletePod(ctx context.Context, p corev1.Pod) {
	Expect(client.IgnoreNotFound(c.Delete(ctx, &p))).To(Succeed())
}

// podByIndex returns the live pod of index i.
func podByIndex(ctx context.Context, j *batchv1.Job, i int) func() *corev1.Pod {
	return func() *corev1.Pod {
		for _, p := range livePods(ctx, j) {
			if p.DeletionTimestamp == nil && p.Annotations[batchv1.JobCompletionIndexAnnotation] == strconv.Itoa(i) {
				return &p
			}
		}
		return nil
	}
}

var _ = Describe("Job pod tracking with the job-tracking finalizer", func() {
	It("counts finished pods deleted at once, exactly once", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "gone", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](2), api.Ptr[int32](2)
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
		live := livePods(ctx, j)
		for _, p := range live {
			Expect(p.Finalizers).To(ContainElement(batchv1.JobTrackingFinalizer))
		}
		// A failure and a success, both deleted right after they finished:
		// the finalizer keeps them until they are counted.
		finishPod(ctx, live[0], 1)
		deletePod(ctx, live[0])
		finishPod(ctx, live[1], 0)
		deletePod(ctx, live[1])
		Eventually(jobCounts(ctx, j)).Should(Equal(counts{Succeeded: 1, Failed: 1}))
		Eventually(func() []corev1.Pod { return livePods(ctx, j) }).Should(HaveLen(1))
		last := livePods(ctx, j)[0]
		finishPod(ctx, last, 0)
		deletePod(ctx, last)
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, batchv1.JobReasonCompletionsReached)).Should(BeTrue())
		Expect(jobCounts(ctx, j)()).To(Equal(counts{Succeeded: 2, Failed: 1}))
		Eventually(func() []corev1.Pod { return pods(ctx, j) }).Should(BeEmpty())
	})

	It("counts a running pod deleted by a user as failed and replaces it", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "evicted", nil)
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		first := livePods(ctx, j)[0]
		runPod(ctx, first, true)
		deletePod(ctx, first)
		Eventually(jobCounts(ctx, j)).Should(Equal(counts{Failed: 1}))
		Eventually(func() []string {
			var names []string
			for _, p := range livePods(ctx, j) {
				names = append(names, p.Name)
			}
			return names
		}).Should(And(HaveLen(1), Not(ContainElement(first.Name))))
	})

	It("does not count twice when the controller restarts between recording and counting", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "crash", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](3), api.Ptr[int32](3)
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(3))
		Eventually(func() int32 { return getJob(ctx, j).Status.Active }).Should(Equal(int32(3)))
		stopManager()
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				startManager()
			}
		})

		// The state a controller leaves when it stops right after writing the
		// uncounted UIDs (pod a, finalizer still on) and right after removing
		// a finalizer (pod b).
		live := livePods(ctx, j)
		slices.SortFunc(live, func(x, y corev1.Pod) int { return strings.Compare(x.Name, y.Name) })
		a, b := live[0], live[1]
		finishPod(ctx, a, 0)
		finishPod(ctx, b, 0)
		cur := getJob(ctx, j)
		cur.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []string{a.UID, b.UID}}
		Expect(c.Status().Update(ctx, cur)).To(Succeed())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(&b), &b)).To(Succeed())
		b.Finalizers = slices.DeleteFunc(b.Finalizers, func(f string) bool { return f == batchv1.JobTrackingFinalizer })
		Expect(c.Update(ctx, &b)).To(Succeed())

		startManager()
		restarted = true
		Eventually(jobCounts(ctx, j)).Should(Equal(counts{Succeeded: 2}))
		Consistently(jobCounts(ctx, j), "500ms").Should(Equal(counts{Succeeded: 2}))
		Eventually(func() []string {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(&a), &a)).To(Succeed())
			return a.Finalizers
		}).ShouldNot(ContainElement(batchv1.JobTrackingFinalizer))
		finishPod(ctx, live[2], 0)
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, "")).Should(BeTrue())
		Expect(jobCounts(ctx, j)()).To(Equal(counts{Succeeded: 3}))
	})

	It("releases the pods of a deleted Job", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "orphans", func(j *batchv1.Job) { j.Spec.Parallelism = api.Ptr[int32](2) })
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
		// Orphan propagation: the pods stay, without the finalizer. (The
		// garbage collector, working from its graph, may still delete one it
		// saw owned when the Job went; none may stay held by the finalizer.)
		Expect(c.Delete(ctx, getJob(ctx, j), client.PropagationPolicy(api.DeletePropagationOrphan))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(j), &batchv1.Job{}))
		}).Should(BeTrue())
		Eventually(func() [][]string {
			var out [][]string
			for _, p := range pods(ctx, j) {
				out = append(out, p.Finalizers)
			}
			return out
		}).Should(HaveEach(Not(ContainElement(batchv1.JobTrackingFinalizer))))
		for _, p := range pods(ctx, j) {
			Expect(p.OwnerReferences).To(BeEmpty())
		}
	})
})

var _ = Describe("Deleting a running Job", func() {
	for _, policy := range []string{api.DeletePropagationBackground, api.DeletePropagationForeground} {
		It("with "+policy+" propagation deletes its pods despite their finalizer", func(ctx SpecContext) {
			ns := namespace(ctx)
			j := newJob(ns, "bye", func(j *batchv1.Job) { j.Spec.Parallelism = api.Ptr[int32](2) })
			Expect(c.Create(ctx, j)).To(Succeed())
			Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
			Expect(c.Delete(ctx, getJob(ctx, j), client.PropagationPolicy(policy))).To(Succeed())
			Eventually(func() []corev1.Pod { return pods(ctx, j) }).Should(BeEmpty())
			Eventually(func() bool {
				return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(j), &batchv1.Job{}))
			}).Should(BeTrue())
		})
	}
})

var _ = Describe("Job pods orphaned by the garbage collector", func() {
	It("lose the tracking finalizer", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "orphaned", func(j *batchv1.Job) { j.Spec.Parallelism = api.Ptr[int32](2) })
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(2))
		Eventually(func() int32 { return getJob(ctx, j).Status.Active }).Should(Equal(int32(2)))
		// While the controller is down, the Job goes and the garbage
		// collector orphans its pods (removes their owner references).
		stopManager()
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				startManager()
			}
		})
		for _, p := range pods(ctx, j) {
			Expect(c.Patch(ctx, &p, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"ownerReferences":null}}`)))).To(Succeed())
		}
		Expect(c.Delete(ctx, getJob(ctx, j))).To(Succeed())
		startManager()
		restarted = true
		// (The garbage collector may still delete a pod it saw owned.)
		Eventually(func() [][]string {
			var out [][]string
			for _, p := range pods(ctx, j) {
				out = append(out, p.Finalizers)
			}
			return out
		}).Should(HaveEach(Not(ContainElement(batchv1.JobTrackingFinalizer))))
	})
})

var _ = Describe("Job success policy", func() {
	It("succeeds once the succeededIndexes completed and terminates the other pods", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "leader", func(j *batchv1.Job) {
			j.Spec.CompletionMode = api.Ptr(batchv1.IndexedCompletion)
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](3), api.Ptr[int32](3)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
				{SucceededIndexes: api.Ptr("0")},
			}}
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(3))
		finishPod(ctx, *podByIndex(ctx, j, 1)(), 0)
		Eventually(func() string { return getJob(ctx, j).Status.CompletedIndexes }).Should(Equal("1"))
		Expect(condition(getJob(ctx, j), batchv1.JobSuccessCriteriaMet)).To(BeNil())
		finishPod(ctx, *podByIndex(ctx, j, 0)(), 0)
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)).Should(BeTrue())
		got := getJob(ctx, j)
		met := condition(got, batchv1.JobSuccessCriteriaMet)
		Expect(met).NotTo(BeNil())
		Expect(met.Reason).To(Equal(batchv1.JobReasonSuccessPolicy))
		Expect(met.Message).To(Equal("Matched rules at index 0"))
		Expect(got.Status.CompletedIndexes).To(Equal("0,1"))
		Expect(got.Status.Succeeded).To(Equal(int32(2)))
		Expect(got.Status.CompletionTime).NotTo(BeNil())
		// Index 2 was still running: terminated, not counted as a failure.
		Expect(got.Status.Failed).To(BeZero())
		Expect(livePods(ctx, j)).To(BeEmpty())
	})
})

var _ = Describe("Job backoffLimitPerIndex", func() {
	It("retries each index up to its limit, records failedIndexes and fails with FailedIndexes", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "perindex", func(j *batchv1.Job) {
			j.Spec.CompletionMode = api.Ptr(batchv1.IndexedCompletion)
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](3), api.Ptr[int32](3)
			j.Spec.BackoffLimitPerIndex = api.Ptr[int32](1)
			j.Spec.PodReplacementPolicy = api.Ptr(batchv1.Failed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
			}}
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(3))
		Expect(*podByIndex(ctx, j, 0)()).To(HaveField("Annotations", HaveKeyWithValue(batchv1.JobIndexFailureCountAnnotation, "0")))

		// Index 0: one retry, its replacement knows the failure count.
		finishPod(ctx, *podByIndex(ctx, j, 0)(), 1)
		Eventually(podByIndex(ctx, j, 0)).ShouldNot(BeNil())
		Expect(*podByIndex(ctx, j, 0)()).To(HaveField("Annotations", HaveKeyWithValue(batchv1.JobIndexFailureCountAnnotation, "1")))
		Eventually(jobCounts(ctx, j)).Should(Equal(counts{Failed: 1}))
		// The second failure exceeds the limit: the index fails, no retry.
		finishPod(ctx, *podByIndex(ctx, j, 0)(), 1)
		Eventually(func() *string { return getJob(ctx, j).Status.FailedIndexes }).Should(HaveValue(Equal("0")))
		// Index 1 fails at once through the FailIndex rule.
		finishPod(ctx, *podByIndex(ctx, j, 1)(), 42)
		Eventually(func() *string { return getJob(ctx, j).Status.FailedIndexes }).Should(HaveValue(Equal("0,1")))
		Consistently(podByIndex(ctx, j, 0), "300ms").Should(BeNil())
		Expect(podByIndex(ctx, j, 1)()).To(BeNil())
		Expect(getJob(ctx, j).Status.Conditions).To(BeEmpty())

		finishPod(ctx, *podByIndex(ctx, j, 2)(), 0)
		Eventually(hasCondition(ctx, j, batchv1.JobFailed, batchv1.JobReasonFailedIndexes)).Should(BeTrue())
		got := getJob(ctx, j)
		Expect(condition(got, batchv1.JobFailed).Message).To(Equal("Job has failed indexes"))
		Expect(got.Status.CompletedIndexes).To(Equal("2"))
		Expect(got.Status.Failed).To(Equal(int32(3)))
		Expect(got.Status.Succeeded).To(Equal(int32(1)))
	})

	It("fails with MaxFailedIndexesExceeded beyond maxFailedIndexes", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "maxfailed", func(j *batchv1.Job) {
			j.Spec.CompletionMode = api.Ptr(batchv1.IndexedCompletion)
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](3), api.Ptr[int32](3)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = api.Ptr[int32](0), api.Ptr[int32](1)
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(3))
		finishPod(ctx, *podByIndex(ctx, j, 0)(), 1)
		Eventually(func() *string { return getJob(ctx, j).Status.FailedIndexes }).Should(HaveValue(Equal("0")))
		finishPod(ctx, *podByIndex(ctx, j, 1)(), 1)
		Eventually(hasCondition(ctx, j, batchv1.JobFailed, batchv1.JobReasonMaxFailedIndexesExceeded)).Should(BeTrue())
		got := getJob(ctx, j)
		Expect(condition(got, batchv1.JobFailed).Message).To(Equal("Job has exceeded the specified maximal number of failed indexes"))
		// Index 2 was running: deleted and counted as failed with the Job.
		Expect(got.Status.Failed).To(Equal(int32(3)))
		Eventually(func() []corev1.Pod { return livePods(ctx, j) }).Should(BeEmpty())
	})
})

// bindPod plays the scheduler: the pod goes to node (created if missing).
func bindPod(ctx context.Context, p corev1.Pod, node string) {
	n := &corev1.Node{ObjectMeta: api.ObjectMeta{Name: node}}
	if err := c.Create(ctx, n); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	b := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	b.Name, b.Namespace = p.Name, p.Namespace
	Expect(c.SubResource("binding").Create(ctx, &p, b)).To(Succeed())
}

var _ = Describe("Job podReplacementPolicy", func() {
	// terminatingPod deletes the Job's only pod while a node runs it: it
	// stays Terminating for its grace period.
	terminatingPod := func(ctx context.Context, j *batchv1.Job) corev1.Pod {
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		p := livePods(ctx, j)[0]
		bindPod(ctx, p, "job-node-"+j.Namespace)
		runPod(ctx, p, true)
		Expect(c.Delete(ctx, &p, client.GracePeriodSeconds(30))).To(Succeed())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(&p), &p)).To(Succeed())
		Expect(p.DeletionTimestamp).NotTo(BeNil())
		return p
	}

	It("replaces a terminating pod at once with TerminatingOrFailed, counting it as failed", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "eager", nil)
		Expect(c.Create(ctx, j)).To(Succeed())
		old := terminatingPod(ctx, j)
		Eventually(func() []corev1.Pod { return livePods(ctx, j) }).Should(ContainElement(
			And(HaveField("Name", Not(Equal(old.Name))), HaveField("DeletionTimestamp", BeNil()))))
		Eventually(func() batchv1.JobStatus { return getJob(ctx, j).Status }).Should(And(
			HaveField("Failed", int32(1)), HaveField("Active", int32(1)), HaveField("Terminating", HaveValue(Equal(int32(1))))))
		// Counted: the finalizer is gone although the pod still terminates.
		Expect(c.Get(ctx, client.ObjectKeyFromObject(&old), &old)).To(Succeed())
		Expect(old.Finalizers).NotTo(ContainElement(batchv1.JobTrackingFinalizer))
	})

	It("waits for a terminating pod to fail before replacing it with Failed", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "patient", func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = api.Ptr(batchv1.Failed) })
		Expect(c.Create(ctx, j)).To(Succeed())
		old := terminatingPod(ctx, j)
		Eventually(func() *int32 { return getJob(ctx, j).Status.Terminating }).Should(HaveValue(Equal(int32(1))))
		Consistently(func() []corev1.Pod { return pods(ctx, j) }, "500ms").Should(HaveLen(1))
		Expect(getJob(ctx, j).Status.Failed).To(BeZero())
		// The node agent stops it: Failed, then a replacement.
		finishPod(ctx, old, 137)
		Eventually(jobCounts(ctx, j)).Should(Equal(counts{Failed: 1}))
		Eventually(func() []corev1.Pod { return livePods(ctx, j) }).Should(ContainElement(HaveField("Name", Not(Equal(old.Name)))))
	})
})

var _ = Describe("Job with restartPolicy OnFailure", func() {
	It("fails with BackoffLimitExceeded once container restarts reach backoffLimit", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "restarts", func(j *batchv1.Job) {
			j.Spec.BackoffLimit = api.Ptr[int32](2)
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		})
		Expect(c.Create(ctx, j)).To(Succeed())
		Eventually(func() int { return len(livePods(ctx, j)) }).Should(Equal(1))
		restart := func(n int32) {
			updatePodStatus(ctx, livePods(ctx, j)[0], func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox", RestartCount: n}}
			})
		}
		restart(1)
		Consistently(hasCondition(ctx, j, batchv1.JobFailureTarget, ""), "300ms").Should(BeFalse())
		restart(2)
		Eventually(hasCondition(ctx, j, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)).Should(BeTrue())
		Eventually(func() []corev1.Pod { return pods(ctx, j) }).Should(BeEmpty())
		Expect(getJob(ctx, j).Status.Failed).To(Equal(int32(1)))
	})
})

var _ = Describe("Job validation", func() {
	It("refuses invalid successPolicy, backoffLimitPerIndex and podFailurePolicy fields with 422 and their paths", func(ctx SpecContext) {
		ns := namespace(ctx)
		j := newJob(ns, "bad", func(j *batchv1.Job) {
			j.Spec.CompletionMode = api.Ptr(batchv1.IndexedCompletion)
			j.Spec.Parallelism, j.Spec.Completions = api.Ptr[int32](2), api.Ptr[int32](2)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: api.Ptr("0-2")}}}
			j.Spec.MaxFailedIndexes = api.Ptr[int32](1)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}}},
			}}
		})
		err := c.Create(ctx, j)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(
			ContainSubstring(`spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-2": error parsing succeededIndexes: too large index: "2"`),
			ContainSubstring("spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"),
			ContainSubstring(`spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set`)))
	})
})

var _ = Describe("Job pods created by an older controller", func() {
	It("get the tracking finalizer and are counted", func(ctx SpecContext) {
		ns := namespace(ctx)
		// The Job and its running pod exist before this controller starts.
		stopManager()
		restarted := false
		DeferCleanup(func() {
			if !restarted {
				startManager()
			}
		})
		j := newJob(ns, "legacy", nil)
		Expect(c.Create(ctx, j)).To(Succeed())
		j = getJob(ctx, j)
		p := &corev1.Pod{
			ObjectMeta: api.ObjectMeta{Name: "legacy-old", Namespace: ns, Labels: j.Spec.Template.Labels,
				OwnerReferences: []api.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
					Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true)}}},
			Spec: j.Spec.Template.Spec,
		}
		Expect(c.Create(ctx, p)).To(Succeed())
		runPod(ctx, *p, true)
		startManager()
		restarted = true
		Eventually(func() []string {
			Expect(c.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			return p.Finalizers
		}).Should(ContainElement(batchv1.JobTrackingFinalizer))
		Consistently(func() []corev1.Pod { return pods(ctx, j) }, "300ms").Should(HaveLen(1))
		finishPod(ctx, *p, 0)
		Eventually(hasCondition(ctx, j, batchv1.JobComplete, "")).Should(BeTrue())
		Expect(jobCounts(ctx, j)()).To(Equal(counts{Succeeded: 1}))
	})
})
