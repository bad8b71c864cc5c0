package controlplane

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/tracing"
)

// SchedulerOptions configure NewScheduler. The zero value runs the default
// profile.
type SchedulerOptions struct {
	// Scheduler configures the scheduler (configuration file, plugins, queue
	// tuning); its Logger defaults to the manager's.
	Scheduler scheduler.Options
	// Manager configures the manager (logger, metrics and health addresses,
	// leader election); its Scheme defaults to every built-in kind.
	Manager manager.Options
	// Tracing traces the scheduler's API calls when Manager has no
	// TracerProvider.
	Tracing tracing.Config
	// Pods, if set, is a pod informer that another manager of this process
	// runs (converge up: the controller manager's), read by the scheduler
	// instead of a second watch and cache of every pod. nil (the split
	// command) gives the scheduler its own.
	Pods *cache.Informer[*corev1.Pod]
}

// NewScheduler returns a manager, with the client configuration cfg, that
// runs the scheduler. Both `converge up` and `converge scheduler` build theirs
// here. Start the manager to run it.
func NewScheduler(ctx context.Context, cfg *client.Config, o SchedulerOptions) (*manager.Manager, error) {
	if o.Manager.Scheme == nil {
		sch, err := all.NewScheme()
		if err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
		o.Manager.Scheme = sch
	}
	if o.Manager.DefaultTransform == nil {
		// The scheduler never reads managedFields.
		o.Manager.DefaultTransform = cache.StripManagedFields
	}
	mgr, err := newTracedManager(cfg, o.Manager, o.Tracing, "scheduler")
	if err != nil {
		return nil, fmt.Errorf("create scheduler manager: %w", err)
	}
	if o.Pods != nil {
		if err := cache.Share(mgr.Informers(), o.Pods); err != nil {
			return nil, fmt.Errorf("share the pod informer: %w", err)
		}
	}
	if o.Scheduler.Logger.GetSink() == nil {
		o.Scheduler.Logger = o.Manager.Logger
	}
	s, err := scheduler.NewFromManager(ctx, mgr, o.Scheduler)
	if err != nil {
		return nil, fmt.Errorf("create scheduler: %w", err)
	}
	if err := mgr.Add(s); err != nil {
		return nil, fmt.Errorf("add scheduler: %w", err)
	}
	return mgr, nil
}
