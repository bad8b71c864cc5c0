package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/controllers"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
)

// startControllers runs the selected built-in controllers in a manager that talks
// to this control plane's API server over loopback, like any other client.
func (cp *ControlPlane) startControllers(ctx context.Context) error {
	t0 := time.Now()
	sch, err := all.NewScheme()
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	mgr, err := manager.New(&client.Config{Host: cp.url, UserAgent: "converge-controller-manager"}, manager.Options{
		Scheme: sch, Logger: cp.log.WithName("controller-manager"),
	})
	if err != nil {
		return fmt.Errorf("create controller manager: %w", err)
	}
	names := cp.opts.Controllers
	if len(names) == 1 && names[0] == "*" {
		names = nil
	}
	if err := controllers.Setup(mgr, names); err != nil {
		return err
	}
	cp.manager = mgr
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			cp.errCh <- fmt.Errorf("controller manager: %w", err)
		}
	}()
	cp.opts.Progress("controllers", time.Since(t0))
	return nil
}
