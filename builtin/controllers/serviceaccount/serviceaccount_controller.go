package serviceaccount

import (
	"context"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "serviceaccount"

// DefaultName is the name of the ServiceAccount every namespace gets.
const DefaultName = "default"

// Setup adds the ServiceAccount controller to mgr. It reconciles namespaces;
// a ServiceAccount event enqueues its namespace.
func Setup(mgr *manager.Manager) error {
	r := &reconciler{
		reader:   mgr.Reader(),
		client:   mgr.Client(),
		recorder: mgr.EventRecorder("service-account-controller"),
	}
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj api.Object) []reconcile.Request {
		if obj.GetName() != DefaultName {
			return nil
		}
		return []reconcile.Request{{ObjectKey: client.ObjectKey{Name: obj.GetNamespace()}}}
	})
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Namespace]()).
		Watches(builder.Kind[*corev1.ServiceAccount](), toNamespace).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}
