package deployment_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/deployment"
	"github.com/converge-dev/converge/builtin/controllers/internal/podutil"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// rsByRevision returns the ReplicaSets of ns keyed by revision annotation.
func rsByRevision(ctx context.Context, ns string) map[string]appsv1.ReplicaSet {
	out := map[string]appsv1.ReplicaSet{}
	for _, rs := range replicaSets(ctx, ns) {
		out[rs.Annotations[deployment.RevisionAnnotation]] = rs
	}
	return out
}

// rolledOut is what `kubectl rollout status` waits for.
func rolledOut(ctx context.Context, ns, name string) func(g Gomega) {
	return func(g Gomega) {
		d := getDeployment(ctx, ns, name)
		g.Expect(d.Status.ObservedGeneration).To(BeNumerically(">=", d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(*d.Spec.Replicas))
		p := condition(d, appsv1.DeploymentProgressing)
		g.Expect(p).NotTo(BeNil())
		g.Expect(p.Reason).To(Equal(deployment.ReasonNewRSAvailable))
	}
}

var _ = Describe("Deployment controller", func() {
	It("creates a ReplicaSet with pod-template-hash and revision 1 and becomes Available", func(ctx SpecContext) {
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "web", 3, "nginx:1")
		d.Annotations = map[string]string{deployment.ChangeCauseAnnotation: "first"}
		Expect(c.Create(ctx, d)).To(Succeed())

		Eventually(func() []appsv1.ReplicaSet { return replicaSets(ctx, ns) }).Should(HaveLen(1))
		rs := replicaSets(ctx, ns)[0]
		hash := deployment.ComputeHash(&d.Spec.Template, nil)
		Expect(rs.Name).To(Equal("web-" + hash))
		Expect(rs.Labels).To(HaveKeyWithValue("pod-template-hash", hash))
		Expect(rs.Spec.Selector.MatchLabels).To(HaveKeyWithValue("pod-template-hash", hash))
		Expect(rs.Spec.Template.Labels).To(HaveKeyWithValue("pod-template-hash", hash))
		Expect(rs.Annotations).To(HaveKeyWithValue(deployment.RevisionAnnotation, "1"))
		Expect(rs.Annotations).To(HaveKeyWithValue(deployment.DesiredReplicasAnnotation, "3"))
		Expect(rs.Annotations).To(HaveKeyWithValue(deployment.MaxReplicasAnnotation, "4"))
		Expect(rs.Annotations).To(HaveKeyWithValue(deployment.ChangeCauseAnnotation, "first"))
		Expect(rs.OwnerReferences).To(HaveLen(1))
		Expect(rs.OwnerReferences[0].UID).To(Equal(d.UID))

		Eventually(rolledOut(ctx, ns, "web")).Should(Succeed())
		got := getDeployment(ctx, ns, "web")
		Expect(got.Annotations).To(HaveKeyWithValue(deployment.RevisionAnnotation, "1"))
		a := condition(got, appsv1.DeploymentAvailable)
		Expect(a.Status).To(Equal(corev1.ConditionTrue))
		Expect(a.Reason).To(Equal(deployment.ReasonMinimumAvailable))
		Expect(got.Status.ReadyReplicas).To(Equal(int32(3)))
		Expect(got.Status.UnavailableReplicas).To(Equal(int32(0)))
		Expect(eventReasons(ctx, ns, "web")).To(ContainElement(deployment.ReasonScalingReplicaSet))
	})

	It("rolls out an image change with maxUnavailable 0 and maxSurge 1 without losing availability", func(ctx SpecContext) {
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "roll", 3, "nginx:1")
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: api.Ptr(api.FromInt(0)), MaxSurge: api.Ptr(api.FromInt(1))}}
		Expect(c.Create(ctx, d)).To(Succeed())
		Eventually(rolledOut(ctx, ns, "roll")).Should(Succeed())

		// Watch the ready pods of the selector continuously.
		var minReady, maxTotal atomic.Int32
		minReady.Store(1 << 20)
		wctx, cancel := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(watched)
			for wctx.Err() == nil {
				var l corev1.PodList
				if err := c.List(wctx, &l, client.InNamespace(ns), client.MatchingLabels{"app": "roll"}); err == nil {
					var ready, total int32
					for i := range l.Items {
						if l.Items[i].DeletionTimestamp == nil {
							total++
							if podutil.IsReady(&l.Items[i]) {
								ready++
							}
						}
					}
					if ready < minReady.Load() {
						minReady.Store(ready)
					}
					if total > maxTotal.Load() {
						maxTotal.Store(total)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
		patch(ctx, d, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`)
		Eventually(func() map[string]appsv1.ReplicaSet { return rsByRevision(ctx, ns) }).Should(HaveKey("2"))
		Eventually(rolledOut(ctx, ns, "roll")).Should(Succeed())
		Eventually(func(g Gomega) {
			revs := rsByRevision(ctx, ns)
			g.Expect(*revs["1"].Spec.Replicas).To(Equal(int32(0)))
			g.Expect(*revs["2"].Spec.Replicas).To(Equal(int32(3)))
		}).Should(Succeed())
		cancel()
		<-watched
		Expect(minReady.Load()).To(BeNumerically(">=", 3))
		// maxSurge bounds the ReplicaSets' replicas (3+1), like Kubernetes; a pod of a
		// scaled-down ReplicaSet may still be seen for a moment after its deletion
		// was decided, so one more pod than that can be observed.
		Expect(maxTotal.Load()).To(BeNumerically("<=", 5))
		for _, p := range pods(ctx, ns, "roll") {
			Expect(p.Spec.Containers[0].Image).To(Equal("nginx:2"))
		}
	})

	It("recreates: old pods are gone before new ones are created", func(ctx SpecContext) {
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "rec", 2, "nginx:1")
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		Expect(c.Create(ctx, d)).To(Succeed())
		Eventually(rolledOut(ctx, ns, "rec")).Should(Succeed())

		var mixed atomic.Bool
		wctx, cancel := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(watched)
			for wctx.Err() == nil {
				var l corev1.PodList
				if err := c.List(wctx, &l, client.InNamespace(ns), client.MatchingLabels{"app": "rec"}); err == nil {
					images := map[string]bool{}
					for _, p := range l.Items {
						images[p.Spec.Containers[0].Image] = true
					}
					if len(images) > 1 {
						mixed.Store(true)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
		patch(ctx, d, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`)
		Eventually(func() map[string]appsv1.ReplicaSet { return rsByRevision(ctx, ns) }).Should(HaveKey("2"))
		Eventually(rolledOut(ctx, ns, "rec")).Should(Succeed())
		cancel()
		<-watched
		Expect(mixed.Load()).To(BeFalse())
	})

	It("rolls back like kubectl rollout undo: the old ReplicaSet becomes new with the next revision", func(ctx SpecContext) {
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "undo", 2, "nginx:1")
		Expect(c.Create(ctx, d)).To(Succeed())
		Eventually(rolledOut(ctx, ns, "undo")).Should(Succeed())
		patch(ctx, d, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`)
		Eventually(func() map[string]appsv1.ReplicaSet { return rsByRevision(ctx, ns) }).Should(HaveKey("2"))
		Eventually(rolledOut(ctx, ns, "undo")).Should(Succeed())

		// What kubectl does: take revision 1's template without the hash label.
		rev1 := rsByRevision(ctx, ns)["1"]
		tmpl := rev1.Spec.Template
		delete(tmpl.Labels, "pod-template-hash")
		cur := getDeployment(ctx, ns, "undo")
		Eventually(func() error {
			cur = getDeployment(ctx, ns, "undo")
			cur.Spec.Template = tmpl
			return c.Update(ctx, cur)
		}).Should(Succeed())

		Eventually(func(g Gomega) {
			revs := rsByRevision(ctx, ns)
			g.Expect(revs).To(HaveKey("3"))
			g.Expect(revs["3"].Name).To(Equal(rev1.Name))
			g.Expect(revs["3"].Annotations).To(HaveKeyWithValue(deployment.RevisionHistoryAnnotation, "1"))
		}).Should(Succeed())
		Eventually(rolledOut(ctx, ns, "undo")).Should(Succeed())
		Eventually(func(g Gomega) {
			revs := rsByRevision(ctx, ns)
			g.Expect(*revs["3"].Spec.Replicas).To(Equal(int32(2)))
			g.Expect(*revs["2"].Spec.Replicas).To(Equal(int32(0)))
		}).Should(Succeed())
		Expect(replicaSets(ctx, ns)).To(HaveLen(2))
		Expect(getDeployment(ctx, ns, "undo").Annotations).To(HaveKeyWithValue(deployment.RevisionAnnotation, "3"))
	})

	It("does not roll out while paused, and does after resume", func(ctx SpecContext) {
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "p", 2, "nginx:1")
		Expect(c.Create(ctx, d)).To(Succeed())
		Eventually(rolledOut(ctx, ns, "p")).Should(Succeed())
		patch(ctx, d, `{"spec":{"paused":true}}`)
		Eventually(func() string {
			if p := condition(getDeployment(ctx, ns, "p"), appsv1.DeploymentProgressing); p != nil {
				return p.Reason
			}
			return ""
		}).Should(Equal(deployment.ReasonPaused))
		patch(ctx, d, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`)
		Consistently(func() []appsv1.ReplicaSet { return replicaSets(ctx, ns) }, 500*time.Millisecond).Should(HaveLen(1))
		// Scaling still works while paused.
		patch(ctx, d, `{"spec":{"replicas":3}}`)
		Eventually(func() int32 { return *replicaSets(ctx, ns)[0].Spec.Replicas }).Should(Equal(int32(3)))

		patch(ctx, d, `{"spec":{"paused":false}}`)
		Eventually(func() []appsv1.ReplicaSet { return replicaSets(ctx, ns) }).Should(HaveLen(2))
		Eventually(rolledOut(ctx, ns, "p")).Should(Succeed())
	})

	It("reports ProgressDeadlineExceeded when pods never become ready", func(ctx SpecContext) {
		ns := namespace(ctx)
		d := newDeployment(ns, "stuck", 2, "nginx:1")
		d.Spec.ProgressDeadlineSeconds = api.Ptr[int32](2)
		Expect(c.Create(ctx, d)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getDeployment(ctx, ns, "stuck")
			p := condition(got, appsv1.DeploymentProgressing)
			g.Expect(p).NotTo(BeNil())
			g.Expect(p.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(p.Reason).To(Equal(deployment.ReasonTimedOut))
			a := condition(got, appsv1.DeploymentAvailable)
			g.Expect(a.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(a.Reason).To(Equal(deployment.ReasonMinimumUnavailable))
		}, 8*time.Second).Should(Succeed())
		Expect(eventReasons(ctx, ns, "stuck")).To(ContainElement(deployment.ReasonTimedOut))
	})

	It("deletes old ReplicaSets beyond revisionHistoryLimit", func(ctx SpecContext) {
		ns := namespace(ctx)
		kubelet(ctx, ns)
		d := newDeployment(ns, "h", 1, "nginx:1")
		d.Spec.RevisionHistoryLimit = api.Ptr[int32](1)
		Expect(c.Create(ctx, d)).To(Succeed())
		for i := 2; i <= 4; i++ {
			Eventually(rolledOut(ctx, ns, "h")).Should(Succeed())
			patch(ctx, d, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:%d"}]}}}}`, i))
			Eventually(func() map[string]appsv1.ReplicaSet { return rsByRevision(ctx, ns) }).Should(HaveKey(fmt.Sprint(i)))
		}
		Eventually(rolledOut(ctx, ns, "h")).Should(Succeed())
		Eventually(func() []string {
			var revs []string
			for r := range rsByRevision(ctx, ns) {
				revs = append(revs, r)
			}
			return revs
		}).Should(ConsistOf("3", "4"))
	})
})
