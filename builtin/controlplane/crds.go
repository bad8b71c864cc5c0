package controlplane

import (
	"context"

	"github.com/converge-dev/converge/crd"
	crdcontroller "github.com/converge-dev/converge/crd/controller"
)

// startCRDs serves customresourcedefinitions and runs the CRD lifecycle loop
// until ctx ends.
func (cp *ControlPlane) startCRDs(ctx context.Context) {
	cp.registry.Add(crd.Resource())
	c := crdcontroller.New(crdcontroller.Options{
		Storage: cp.store, Registry: cp.registry, Handler: cp.server.Handler(), Logger: cp.log.WithName("crd"),
	})
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		_ = c.Run(ctx)
	}()
}
