package controlplane

import (
	"context"

	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/crd"
	"github.com/converge-dev/converge/crd/lifecycle"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// startCRDs serves customresourcedefinitions and runs the CRD lifecycle loop
// until ctx ends. Its status and finalizer writes go through the handler as
// the API server itself (system:masters), so they pass authentication and
// authorization in secure mode.
func (cp *ControlPlane) startCRDs(ctx context.Context) {
	cp.registry.Add(crd.Resource())
	c := lifecycle.New(lifecycle.Options{
		Storage: cp.store, Registry: cp.registry, Handler: cp.server.Handler(), Logger: cp.log.WithName("crd"),
		Dial: cp.serviceDial,
	})
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		_ = c.Run(filters.WithUser(ctx, rbac.BootstrapUser))
	}()
}
