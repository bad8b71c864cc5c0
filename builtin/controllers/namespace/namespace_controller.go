package namespace

import (
	"fmt"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/manager"
)

// Name is the controller's name.
const Name = "namespace"

// Setup adds the namespace lifecycle controller to mgr.
func Setup(mgr *manager.Manager) error {
	c := mgr.Client()
	r := &reconciler{
		reader:       mgr.Reader(),
		client:       c,
		content:      c,
		discoverer:   restDiscoverer{c.REST()},
		recorder:     mgr.EventRecorder("namespace-controller"),
		requeueAfter: 2 * time.Second,
	}
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Namespace]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// emptyObject names the collection of res.
func emptyObject(res resource) *api.Unstructured {
	u := &api.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(res.GVK())
	return u
}
