package builder_test

import (
	"context"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/controllerutil"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/predicate"
	"github.com/converge-dev/converge/framework/reconcile"
)

// A controller that reconciles ConfigMaps, owns Secrets it creates for them,
// and is woken for every ConfigMap of a namespace when a Namespace changes.
func Example() {
	setup := func(mgr *manager.Manager) error {
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			cm := &corev1.ConfigMap{}
			if err := mgr.Client().Get(ctx, req.ObjectKey, cm); err != nil {
				return reconcile.Result{}, err // NotFound: gone, nothing to do
			}
			secret := &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
			_, err := controllerutil.CreateOrUpdate(ctx, mgr.Client(), secret, func() error {
				secret.StringData = cm.Data
				return controllerutil.SetControllerReference(cm, secret, mgr.Scheme())
			})
			return reconcile.Result{}, err
		})
		namespaceToConfigMaps := func(ctx context.Context, ns api.Object) []reconcile.Request {
			var list corev1.ConfigMapList
			_ = mgr.Client().List(ctx, &list) // a real controller would read an informer's store
			var reqs []reconcile.Request
			for _, cm := range list.Items {
				if cm.Namespace == ns.GetName() {
					reqs = append(reqs, handler.RequestFor(&cm))
				}
			}
			return reqs
		}
		return builder.ControllerManagedBy(mgr).
			Named("configmap-secrets").
			For(builder.Kind[*corev1.ConfigMap](), predicate.Or(predicate.ResourceVersionChanged(), predicate.LabelChanged())).
			Owns(builder.Kind[*corev1.Secret]()).
			Watches(builder.Kind[*corev1.Namespace](), handler.EnqueueRequestsFromMapFunc(namespaceToConfigMaps),
				predicate.LabelChanged()).
			WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
			Complete(r)
	}
	_ = setup
}
