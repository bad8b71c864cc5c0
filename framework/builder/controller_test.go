package builder_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
	"github.com/converge-dev/converge/framework/workqueue"
)

// inNamespace keeps a spec's controller to its own namespace.
func inNamespace(ns string) predicate.Predicate {
	return predicate.Func(func(ev handler.Event) bool { return ev.Object.GetNamespace() == ns })
}

// calls records reconcile calls.
type calls struct {
	mu    sync.Mutex
	times []time.Time
}

func (c *calls) add() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times = append(c.times, time.Now())
	return len(c.times)
}

func (c *calls) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.times)
}

func (c *calls) gaps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var g []time.Duration
	for i := 1; i < len(c.times); i++ {
		g = append(g, c.times[i].Sub(c.times[i-1]))
	}
	return g
}

// childReconciler keeps a Secret "<parent>-child" with the parent ConfigMap's
// "value", controlled by the parent.
type childReconciler struct{ mgr *manager.Manager }

func (r childReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	c := r.mgr.Client()
	parent := &corev1.ConfigMap{}
	if err := c.Get(ctx, req.ObjectKey, parent); err != nil {
		return reconcile.Result{}, err // NotFound counts as success
	}
	child := &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: parent.Namespace, Name: parent.Name + "-child"}}
	_, err := controllerutil.CreateOrUpdate(ctx, c, child, func() error {
		child.Data = map[string][]byte{"value": []byte(parent.Data["value"])}
		return controllerutil.SetControllerReference(parent, child, r.mgr.Scheme())
	})
	return reconcile.Result{}, err
}

var _ = Describe("a controller built with For and Owns", func() {
	It("creates children with owner references and reacts to their changes and deletion", func(ctx SpecContext) {
		mgr := newManager(nil)
		c := mgr.Client()
		ns := namespace(ctx, c)
		Expect(builder.ControllerManagedBy(mgr).
			Named("children").
			For(builder.Kind[*corev1.ConfigMap]()).
			Owns(builder.Kind[*corev1.Secret]()).
			WithEventFilter(inNamespace(ns)).
			Complete(childReconciler{mgr: mgr})).To(Succeed())
		run(ctx, mgr)

		parent := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "parent"}, Data: map[string]string{"value": "v1"}}
		Expect(c.Create(ctx, parent)).To(Succeed())
		childKey := client.ObjectKey{Namespace: ns, Name: "parent-child"}
		child := &corev1.Secret{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, childKey, child)).To(Succeed())
			g.Expect(string(child.Data["value"])).To(Equal("v1"))
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
		ref := controllerutil.GetControllerOf(child)
		Expect(ref).NotTo(BeNil())
		Expect(ref.Kind).To(Equal("ConfigMap"))
		Expect(ref.Name).To(Equal("parent"))
		Expect(ref.UID).To(Equal(parent.UID))

		By("following the parent")
		parent.Data["value"] = "v2"
		Expect(c.Update(ctx, parent)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, childKey, child)).To(Succeed())
			g.Expect(string(child.Data["value"])).To(Equal("v2"))
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

		By("repairing a changed child")
		child.Data["value"] = []byte("tampered")
		Expect(c.Update(ctx, child)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, childKey, child)).To(Succeed())
			g.Expect(string(child.Data["value"])).To(Equal("v2"))
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

		By("recreating a deleted child")
		oldUID := child.UID
		Expect(c.Delete(ctx, child)).To(Succeed())
		Eventually(func(g Gomega) {
			fresh := &corev1.Secret{}
			g.Expect(c.Get(ctx, childKey, fresh)).To(Succeed())
			g.Expect(fresh.UID).NotTo(Equal(oldUID))
			g.Expect(controllerutil.GetControllerOf(fresh)).NotTo(BeNil())
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

		By("counting successes")
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_total",
			map[string]string{"controller": "children", "result": "success"})).To(BeNumerically(">=", 4))
		Expect(metric(mgr.Registry(), "workqueue_adds_total", map[string]string{"name": "children"})).To(BeNumerically(">=", 4))
	})
})

var _ = Describe("the finalizer flow", func() {
	It("cleans up, removes the finalizer and lets the object go", func(ctx SpecContext) {
		const finalizer = "test.converge.dev/cleanup"
		mgr := newManager(nil)
		c := mgr.Client()
		ns := namespace(ctx, c)
		var cleaned sync.Map
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, req.ObjectKey, cm); err != nil {
				return reconcile.Result{}, err
			}
			if cm.DeletionTimestamp.IsZero() {
				if controllerutil.AddFinalizer(cm, finalizer) {
					return reconcile.Result{}, c.Update(ctx, cm)
				}
				return reconcile.Result{}, nil
			}
			if controllerutil.ContainsFinalizer(cm, finalizer) {
				cleaned.Store(req.String(), true) // the external cleanup
				controllerutil.RemoveFinalizer(cm, finalizer)
				return reconcile.Result{}, c.Update(ctx, cm)
			}
			return reconcile.Result{}, nil
		})
		Expect(builder.ControllerManagedBy(mgr).Named("finalizer").
			For(builder.Kind[*corev1.ConfigMap](), inNamespace(ns)).
			Complete(r)).To(Succeed())
		run(ctx, mgr)

		cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "guarded"}}
		Expect(c.Create(ctx, cm)).To(Succeed())
		key := client.ObjectKeyFromObject(cm)
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, key, cm)).To(Succeed())
			g.Expect(cm.Finalizers).To(ContainElement(finalizer))
		}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

		Expect(c.Delete(ctx, cm)).To(Succeed())
		Eventually(func() error { return c.Get(ctx, key, &corev1.ConfigMap{}) }, 10*time.Second, 50*time.Millisecond).
			Should(Satisfy(apierrors.IsNotFound))
		_, ok := cleaned.Load(key.String())
		Expect(ok).To(BeTrue(), "cleanup ran before the object went away")
	})
})

var _ = Describe("the retry contract", func() {
	var (
		mgr  *manager.Manager
		c    *client.Client
		ns   string
		logs *logSink
	)
	BeforeEach(func(ctx SpecContext) {
		logs = &logSink{}
		mgr = newManager(logs)
		c = mgr.Client()
		ns = namespace(ctx, c)
	})
	build := func(name string, r reconcile.Reconciler) {
		Expect(builder.ControllerManagedBy(mgr).Named(name).
			For(builder.Kind[*corev1.ConfigMap](), inNamespace(ns)).
			WithOptions(controller.Options{
				RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, 10*time.Second),
			}).
			Complete(r)).To(Succeed())
	}
	create := func(ctx context.Context) {
		Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "subject"}})).To(Succeed())
	}

	It("requeues errors with exponential backoff", func(ctx SpecContext) {
		var got calls
		build("backoff", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			if got.add() <= 3 {
				return reconcile.Result{}, errors.New("boom")
			}
			return reconcile.Result{}, nil
		}))
		run(ctx, mgr)
		create(ctx)
		Eventually(got.count, 10*time.Second, 20*time.Millisecond).Should(Equal(4))
		Consistently(got.count, time.Second, 50*time.Millisecond).Should(Equal(4))
		gaps := got.gaps()
		for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
			Expect(gaps[i]).To(BeNumerically(">=", want*9/10), "retry %d", i+1)
		}
		labels := map[string]string{"controller": "backoff"}
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_errors_total", labels)).To(Equal(3.0))
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_total",
			map[string]string{"controller": "backoff", "result": "error"})).To(Equal(3.0))
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_total",
			map[string]string{"controller": "backoff", "result": "success"})).To(Equal(1.0))
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_time_seconds", labels)).To(Equal(4.0))
		Expect(metric(mgr.Registry(), "workqueue_retries_total", map[string]string{"name": "backoff"})).To(Equal(3.0))
	})

	It("does not retry a terminal error", func(ctx SpecContext) {
		var got calls
		build("terminal", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			got.add()
			return reconcile.Result{}, reconcile.TerminalError(errors.New("invalid spec"))
		}))
		run(ctx, mgr)
		create(ctx)
		Eventually(got.count, 10*time.Second, 20*time.Millisecond).Should(Equal(1))
		Consistently(got.count, 1500*time.Millisecond, 50*time.Millisecond).Should(Equal(1))
		Expect(metric(mgr.Registry(), "controller_runtime_terminal_reconcile_errors_total",
			map[string]string{"controller": "terminal"})).To(Equal(1.0))
		Expect(logs.find("not retrying", "invalid spec")).NotTo(BeEmpty())
	})

	It("requeues after RequeueAfter", func(ctx SpecContext) {
		var got calls
		build("requeue-after", reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			if got.add() == 1 {
				return reconcile.Result{RequeueAfter: 300 * time.Millisecond}, nil
			}
			return reconcile.Result{}, nil
		}))
		run(ctx, mgr)
		create(ctx)
		Eventually(got.count, 10*time.Second, 20*time.Millisecond).Should(Equal(2))
		Expect(got.gaps()[0]).To(BeNumerically(">=", 270*time.Millisecond))
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_total",
			map[string]string{"controller": "requeue-after", "result": "requeue_after"})).To(Equal(1.0))
	})

	It("recovers a panic, counts it and retries; the ctx carries a logger with the reconcile's keys", func(ctx SpecContext) {
		var got calls
		build("panicky", reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			logr.FromContextOrDiscard(ctx).Info("Reconciling")
			if got.add() == 1 {
				panic("kaboom")
			}
			return reconcile.Result{}, nil
		}))
		run(ctx, mgr)
		create(ctx)
		Eventually(got.count, 10*time.Second, 20*time.Millisecond).Should(Equal(2))
		Eventually(func() float64 {
			return metric(mgr.Registry(), "controller_runtime_reconcile_panics_total", map[string]string{"controller": "panicky"})
		}).Should(Equal(1.0))
		Expect(logs.find("Observed a panic", "kaboom", `"reconcileID"`)).NotTo(BeEmpty())
		line := logs.find(`"msg"="Reconciling"`)
		Expect(line).To(ContainSubstring(`"controller"="panicky"`))
		Expect(line).To(ContainSubstring(`"namespace"="` + ns + `"`))
		Expect(line).To(ContainSubstring(`"name"="subject"`))
		Expect(line).To(MatchRegexp(`"reconcileID"="[0-9a-f-]{36}"`))
	})

	It("treats NotFound as success", func(ctx SpecContext) {
		var got calls
		build("notfound", reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			got.add()
			return reconcile.Result{}, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, &corev1.ConfigMap{})
		}))
		run(ctx, mgr)
		create(ctx)
		Eventually(got.count, 10*time.Second, 20*time.Millisecond).Should(Equal(1))
		Consistently(got.count, 500*time.Millisecond, 50*time.Millisecond).Should(Equal(1))
		Expect(metric(mgr.Registry(), "controller_runtime_reconcile_total",
			map[string]string{"controller": "notfound", "result": "success"})).To(Equal(1.0))
	})
})

var _ = Describe("Complete", func() {
	It("validates everything at once", func() {
		mgr := newManager(nil)
		err := builder.ControllerManagedBy(mgr).
			Watches(builder.Kind[*corev1.Secret](), nil, nil).
			WithOptions(controller.Options{MaxConcurrentReconciles: -1}).
			Complete(nil)
		Expect(err).To(MatchError(ContainSubstring("reconciler is nil")))
		Expect(err).To(MatchError(ContainSubstring("For must be called once")))
		Expect(err).To(MatchError(ContainSubstring("Watches: handler is nil")))
		Expect(err).To(MatchError(ContainSubstring("nil predicate")))
		Expect(err).To(MatchError(ContainSubstring("MaxConcurrentReconciles")))
	})
})
