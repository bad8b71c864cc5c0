package controlplane

import (
	"context"
	"fmt"
	"github.com/converge-dev/converge/framework/tracing"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/scheduler"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
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
	mgr, err := newTracedManager(cfg, o.Manager, o.Tracing, "scheduler")
	if err != nil {
		return nil, fmt.Errorf("create scheduler manager: %w", err)
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
