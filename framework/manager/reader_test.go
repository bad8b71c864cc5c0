package manager_test

import (
	"context"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

var _ = Describe("the cache-backed reader", func() {
	It("lets a reconciler read from the informers its controller watches and write through the client", func(ctx SpecContext) {
		mgr := newManager(manager.Options{})
		ns := namespace(ctx, mgr.Client())
		reader := mgr.Reader()
		var mu sync.Mutex
		seen := map[string]string{} // name -> data read from the cache, "" for NotFound
		Expect(builder.ControllerManagedBy(mgr).Named("reader").
			For(builder.Kind[*corev1.ConfigMap](), predicate.Func(func(ev handler.Event) bool { return ev.Object.GetNamespace() == ns })).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var cm corev1.ConfigMap
				err := reader.Get(ctx, req.ObjectKey, &cm)
				if apierrors.IsNotFound(err) {
					mu.Lock()
					seen[req.Name] = ""
					mu.Unlock()
					return reconcile.Result{}, nil
				}
				if err != nil {
					return reconcile.Result{}, err
				}
				mu.Lock()
				seen[req.Name] = cm.Data["v"]
				mu.Unlock()
				if cm.Data["v"] == "1" { // write through the client; the next read sees it
					cm.Data["v"] = "2"
					return reconcile.Result{}, mgr.Client().Update(ctx, &cm)
				}
				return reconcile.Result{}, nil
			}))).To(Succeed())
		start(ctx, mgr)
		read := func() string {
			mu.Lock()
			defer mu.Unlock()
			return seen["r"]
		}
		cm := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "r"}, Data: map[string]string{"v": "1"}}
		Expect(mgr.Client().Create(ctx, cm)).To(Succeed())
		Eventually(read, "10s").Should(Equal("2"))
		Expect(mgr.Client().Delete(ctx, cm)).To(Succeed())
		Eventually(read, "10s").Should(BeEmpty())
	})
})
