package manager_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/record"
)

var _ = Describe("the HTTP endpoints", func() {
	It("serves /metrics, /healthz and /readyz with named checks", func(ctx SpecContext) {
		mgr := newManager(manager.Options{MetricsBindAddress: "127.0.0.1:0", HealthProbeBindAddress: "127.0.0.1:0"})
		ns := namespace(ctx, mgr.Client())
		Expect(mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil })).To(Succeed())
		Expect(mgr.AddReadyzCheck("informers", mgr.CacheSyncCheck())).To(Succeed())
		var ready atomic.Bool
		Expect(mgr.AddReadyzCheck("warm", func(*http.Request) error {
			if !ready.Load() {
				return errors.New("still warming up")
			}
			return nil
		})).To(Succeed())
		Expect(builder.ControllerManagedBy(mgr).Named("metrics").
			For(builder.Kind[*corev1.ConfigMap](), predicate.Func(func(ev handler.Event) bool { return ev.Object.GetNamespace() == ns })).
			Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				return reconcile.Result{}, nil
			}))).To(Succeed())
		start(ctx, mgr)
		Eventually(mgr.HealthProbeAddr).ShouldNot(BeEmpty())
		health, metrics := "http://"+mgr.HealthProbeAddr(), "http://"+mgr.MetricsAddr()

		code, body := get(health + "/healthz")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(Equal("ok"))
		code, body = get(health + "/readyz?verbose")
		Expect(code).To(Equal(http.StatusInternalServerError))
		Expect(body).To(ContainSubstring("[-]warm failed: still warming up"))
		ready.Store(true)
		Eventually(func() int { c, _ := get(health + "/readyz"); return c }, 10*time.Second).Should(Equal(http.StatusOK))
		code, _ = get(health + "/readyz/warm")
		Expect(code).To(Equal(http.StatusOK))
		code, _ = get(health + "/readyz/nope")
		Expect(code).To(Equal(http.StatusNotFound))

		Expect(mgr.Client().Create(ctx, &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "m"}})).To(Succeed())
		Eventually(func() string { _, b := get(metrics + "/metrics"); return b }, 10*time.Second).
			Should(ContainSubstring(`controller_runtime_reconcile_total{controller="metrics",result="success"} 1`))
		_, body = get(metrics + "/metrics")
		for _, want := range []string{
			`controller_runtime_reconcile_errors_total{controller="metrics"} 0`,
			`controller_runtime_reconcile_panics_total{controller="metrics"} 0`,
			`controller_runtime_reconcile_time_seconds_count{controller="metrics"} 1`,
			`workqueue_adds_total{name="metrics"} 1`,
			`workqueue_depth{name="metrics"}`,
			`go_goroutines`,
		} {
			Expect(body).To(ContainSubstring(want))
		}
	})
})

var _ = Describe("graceful shutdown", func() {
	It("gives up after GracefulShutdownTimeout", func(ctx SpecContext) {
		mgr := newManager(manager.Options{GracefulShutdownTimeout: 200 * time.Millisecond})
		release := make(chan struct{})
		Expect(mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			<-ctx.Done()
			<-release // ignores the deadline
			return nil
		}))).To(Succeed())
		stop := start(ctx, mgr)
		time.Sleep(100 * time.Millisecond)
		began := time.Now()
		Expect(stop()).To(MatchError(manager.ErrShutdownTimeout))
		Expect(time.Since(began)).To(BeNumerically("<", 5*time.Second))
		close(release)
	})

	It("stops when a runnable fails and returns its error", func(ctx SpecContext) {
		mgr := newManager(manager.Options{})
		boom := errors.New("boom")
		Expect(mgr.Add(manager.RunnableFunc(func(context.Context) error { return boom }))).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()
		Eventually(done, 10*time.Second).Should(Receive(MatchError(boom)))
		mgr.Client().REST().CloseIdleConnections()
	})
})

// elected is a manager in the leader-election spec with its reconcile count.
type elected struct {
	mgr        *manager.Manager
	reconciles atomic.Int32
	always     atomic.Bool // a runnable without leader election ran
	stop       func() error
}

var _ = Describe("leader election", func() {
	It("lets exactly one manager reconcile and hands over within 15 s when it stops", func(ctx SpecContext) {
		const leaseName = "elected-test"
		var ns string
		var ms [2]*elected
		for i := range ms {
			e := &elected{}
			e.mgr = newManager(manager.Options{
				LeaderElection: true, LeaderElectionID: leaseName,
				LeaderElectionIdentity: []string{"first", "second"}[i],
			})
			if ns == "" {
				ns = namespace(ctx, e.mgr.Client())
			}
			inNS := predicate.Func(func(ev handler.Event) bool { return ev.Object.GetNamespace() == ns })
			Expect(builder.ControllerManagedBy(e.mgr).Named("elected").
				For(builder.Kind[*corev1.ConfigMap](), inNS).
				Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
					e.reconciles.Add(1)
					return reconcile.Result{}, nil
				}))).To(Succeed())
			Expect(e.mgr.Add(alwaysRunnable{ran: &e.always})).To(Succeed())
			ms[i] = e
		}
		ms[0].stop = start(ctx, ms[0].mgr)
		Eventually(ms[0].mgr.IsLeader, 10*time.Second).Should(BeTrue())
		ms[1].stop = start(ctx, ms[1].mgr)

		c := ms[0].mgr.Client()
		Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "one"}})).To(Succeed())
		Eventually(ms[0].reconciles.Load, 10*time.Second).Should(BeNumerically(">=", 1))
		Consistently(ms[1].reconciles.Load, 3*time.Second).Should(BeZero())
		Expect(ms[1].mgr.IsLeader()).To(BeFalse())
		Expect(ms[1].always.Load()).To(BeTrue(), "runnables without leader election run on non-leaders")

		lease := &coordinationv1.Lease{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, lease)).To(Succeed())
		Expect(*lease.Spec.HolderIdentity).To(Equal("first"))
		Expect(*lease.Spec.LeaseDurationSeconds).To(Equal(int32(15)))

		By("stopping the leader")
		Expect(ms[0].stop()).To(Succeed())
		stopped := time.Now()
		Eventually(ms[1].reconciles.Load, 15*time.Second, 50*time.Millisecond).Should(BeNumerically(">=", 1))
		GinkgoWriter.Printf("takeover after %v\n", time.Since(stopped))
		Expect(time.Since(stopped)).To(BeNumerically("<", 15*time.Second))
		c2 := ms[1].mgr.Client()
		Expect(c2.Get(ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, lease)).To(Succeed())
		Expect(*lease.Spec.HolderIdentity).To(Equal("second"))
		Expect(*lease.Spec.LeaseTransitions).To(BeNumerically(">=", 1))
	})
})

type alwaysRunnable struct{ ran *atomic.Bool }

func (a alwaysRunnable) Start(ctx context.Context) error {
	a.ran.Store(true)
	<-ctx.Done()
	return nil
}

func (alwaysRunnable) NeedLeaderElection() bool { return false }

var _ = Describe("the event recorder", func() {
	It("writes Events and aggregates repeats", func(ctx SpecContext) {
		mgr := newManager(manager.Options{})
		c := mgr.Client()
		ns := namespace(ctx, c)
		cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "observed"}}
		Expect(c.Create(ctx, cm)).To(Succeed())
		rec := mgr.EventRecorder("test-controller")
		rec.Event(ctx, cm, record.Normal, "Synced", "all good")
		rec.Eventf(ctx, cm, record.Normal, "Synced", "all %s", "good")
		rec.Event(ctx, cm, record.Warning, "Failed", "oops")

		var events corev1.EventList
		Expect(c.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		Expect(events.Items).To(HaveLen(2))
		byReason := map[string]corev1.Event{}
		for _, ev := range events.Items {
			byReason[ev.Reason] = ev
		}
		synced := byReason["Synced"]
		Expect(synced.Count).To(Equal(int32(2)))
		Expect(synced.Type).To(Equal(record.Normal))
		Expect(synced.Message).To(Equal("all good"))
		Expect(synced.InvolvedObject.Kind).To(Equal("ConfigMap"))
		Expect(synced.InvolvedObject.Name).To(Equal("observed"))
		Expect(synced.InvolvedObject.UID).To(Equal(cm.UID))
		Expect(synced.Source.Component).To(Equal("test-controller"))
		Expect(byReason["Failed"].Type).To(Equal(record.Warning))
		mgr.Client().REST().CloseIdleConnections()
	})
})
