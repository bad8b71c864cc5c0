package controlplane

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/controllers"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/operators/loader"
)

// operatorDir is where operator plugins are picked up at start.
func (cp *ControlPlane) operatorDir() string {
	if cp.opts.DataDir == "" && cp.opts.OperatorDir == "" {
		return ""
	}
	return cmp.Or(cp.opts.OperatorDir, filepath.Join(cp.opts.DataDir, "operators"))
}

// wantsManager reports whether any controller or operator is to run.
func (cp *ControlPlane) wantsManager() bool {
	if len(cp.opts.Controllers) > 0 || len(cp.opts.Operators) > 0 || cp.opts.Scheduler {
		return true
	}
	if d := cp.operatorDir(); d != "" {
		if m, _ := filepath.Glob(filepath.Join(d, "*.so")); len(m) > 0 {
			return true
		}
	}
	return false
}

// startManager runs the selected built-in controllers and the operators in one
// manager that talks to this control plane's API server over loopback, like any
// other client. Operators that fail to load are reported, never fatal.
func (cp *ControlPlane) startManager(ctx context.Context) error {
	t0 := time.Now()
	sch, err := all.NewScheme()
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	cfg, err := cp.componentConfig(rbac.ControllerManagerUser)
	if err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme: sch, Logger: cp.log.WithName("controller-manager"),
	})
	if err != nil {
		return fmt.Errorf("create controller manager: %w", err)
	}
	if len(cp.opts.Controllers) > 0 {
		names := cp.opts.Controllers
		if len(names) == 1 && names[0] == "*" {
			names = nil
		}
		if err := controllers.Setup(mgr, names); err != nil {
			return err
		}
		if err := cp.setupSecurityControllers(mgr); err != nil {
			return err
		}
		cp.opts.Progress("controllers", time.Since(t0))
	}
	cp.manager = mgr
	if cp.opts.Scheduler {
		t1 := time.Now()
		// In secure mode the scheduler has its own identity, hence its own manager.
		smgr, own, err := cp.schedulerManager(mgr, sch)
		if err != nil {
			return err
		}
		sched, err := scheduler.NewFromManager(ctx, smgr, scheduler.Options{ConfigFile: cp.opts.SchedulerConfig, Logger: cp.log.WithName("scheduler")})
		if err != nil {
			return fmt.Errorf("create scheduler: %w", err)
		}
		if err := smgr.Add(sched); err != nil {
			return fmt.Errorf("add scheduler: %w", err)
		}
		if own {
			cp.runManager(ctx, smgr, "scheduler")
		}
		cp.opts.Progress("scheduler", time.Since(t1))
	}
	if dir := cp.operatorDir(); len(cp.opts.Operators) > 0 || dir != "" {
		t1 := time.Now()
		if dir != "" {
			if _, err := os.Stat(dir); err != nil {
				dir = ""
			}
		}
		cp.operators = loader.Start(ctx, mgr, loader.Options{Dir: dir, Paths: cp.opts.Operators, Logger: cp.log, Webhooks: cp.webhookOptions()})
		if len(cp.operators) > 0 {
			if err := loader.Publish(ctx, mgr.Client(), cp.operators, cp.log.WithName("operator")); err != nil {
				cp.log.Error(err, "Publish operator status")
			}
			cp.opts.Progress("operators", time.Since(t1))
		}
	}
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			cp.errCh <- fmt.Errorf("controller manager: %w", err)
		}
	}()
	return nil
}

// Operators reports the operators loaded at start (Running or Failed).
func (cp *ControlPlane) Operators() []loader.Report { return cp.operators }
