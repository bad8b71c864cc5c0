package controlplane

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/converge-dev/converge/builtin/admissionpolicy"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/operators/loader"
)

// startComponents runs the controller manager (the selected controllers and
// the operators) and the scheduler, each built as its split command builds it
// (NewControllerManager, NewScheduler) and each a client of this control
// plane's API server in process (inProcessConfig) with its own identity. Operators that fail
// to load are reported, never fatal. When both run, the scheduler reads the
// controller manager's pod informer (one watch and one cache of every pod in
// the process) instead of its own; its other informers are its own.
func (cp *ControlPlane) startComponents(ctx context.Context) error {
	var pods *cache.Informer[*corev1.Pod]
	if cp.wantsControllerManager() {
		t0 := time.Now()
		cfg, err := cp.inProcessConfig(rbac.ControllerManagerUser)
		if err != nil {
			return err
		}
		o := ControllerManagerOptions{Controllers: []string{}, Manager: manager.Options{Logger: cp.log.WithName("controller-manager"), TracerProvider: cp.tracerProvider(),
			MetricsBindAddress: cp.opts.ControllerManagerMetricsAddress}}
		switch names := cp.opts.Controllers; {
		case len(names) == 1 && names[0] == "*":
			o.Controllers = nil
		case len(names) > 0:
			o.Controllers = names
		}
		if cp.pki != nil {
			o.RootCA, o.Sign = cp.pki.CAPEM(), cp.pki.SignRequest
		}
		mgr, started, err := NewControllerManager(cfg, o)
		if err != nil {
			return err
		}
		cp.manager, cp.controllers = mgr, started
		if cp.opts.Scheduler {
			if pods, err = cache.InformerFor(mgr.Informers(), cache.InformerOptions[*corev1.Pod]{}); err != nil {
				return fmt.Errorf("pod informer: %w", err)
			}
		}
		if cp.registry != nil {
			// Kubernetes' API server type-checks policies itself; here the
			// controller manager does, with the API server's registry.
			if err := admissionpolicy.SetupStatusController(mgr, cp.registry.All); err != nil {
				return err
			}
		}
		cp.dashboard.SetMetrics(mgr.Registry())
		if len(started) > 0 {
			cp.opts.Progress("controllers", time.Since(t0))
		}
		cp.loadOperators(ctx, mgr)
		cp.run(ctx, "controller manager", mgr.Start)
	}
	if cp.opts.Scheduler {
		t0 := time.Now()
		cfg, err := cp.inProcessConfig(rbac.SchedulerUser)
		if err != nil {
			return err
		}
		smgr, err := NewScheduler(ctx, cfg, SchedulerOptions{
			Scheduler: scheduler.Options{ConfigFile: cp.opts.SchedulerConfig, Logger: cp.log.WithName("scheduler")},
			Manager: manager.Options{Logger: cp.log.WithName("scheduler"), TracerProvider: cp.tracerProvider(),
				MetricsBindAddress: cp.opts.SchedulerMetricsAddress},
			Pods: pods,
		})
		if err != nil {
			return err
		}
		cp.scheduler = smgr
		cp.run(ctx, "scheduler", smgr.Start)
		cp.opts.Progress("scheduler", time.Since(t0))
	}
	return nil
}

// operatorDir is where operator plugins are picked up at start.
func (cp *ControlPlane) operatorDir() string {
	if cp.opts.DataDir == "" && cp.opts.OperatorDir == "" {
		return ""
	}
	return cmp.Or(cp.opts.OperatorDir, filepath.Join(cp.opts.DataDir, "operators"))
}

// wantsControllerManager reports whether any controller or operator is to run.
func (cp *ControlPlane) wantsControllerManager() bool {
	if len(cp.opts.Controllers) > 0 || len(cp.opts.Operators) > 0 {
		return true
	}
	if d := cp.operatorDir(); d != "" {
		if m, _ := filepath.Glob(filepath.Join(d, "*.so")); len(m) > 0 {
			return true
		}
	}
	return false
}

// loadOperators loads the operator plugins into mgr and publishes their
// status.
func (cp *ControlPlane) loadOperators(ctx context.Context, mgr *manager.Manager) {
	dir := cp.operatorDir()
	if len(cp.opts.Operators) == 0 && dir == "" {
		return
	}
	t0 := time.Now()
	ld := loader.New(mgr, loader.Options{Dir: dir, Paths: cp.opts.Operators, Logger: cp.log, Webhooks: cp.webhookOptions()})
	if dir != "" {
		// Plugins dropped into dir later are loaded without a restart.
		_ = mgr.Add(ld.Watcher(loader.WatchOptions{Client: mgr.Client()}))
	}
	cp.operators = ld.Start(ctx)
	if len(cp.operators) > 0 {
		if err := loader.Publish(ctx, mgr.Client(), cp.operators, cp.log.WithName("operator")); err != nil {
			cp.log.Error(err, "Publish operator status")
		}
		cp.opts.Progress("operators", time.Since(t0))
	}
}

// Operators reports the operators loaded at start (Running or Failed).
func (cp *ControlPlane) Operators() []loader.Report { return cp.operators }
