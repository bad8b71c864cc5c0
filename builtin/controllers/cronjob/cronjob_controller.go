package cronjob

import (
	"fmt"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/manager"
)

// ControllerName is the controller's name (also the event source component).
const ControllerName = "cronjob-controller"

// Options configure the controller. The zero value means defaults.
type Options struct {
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// MaxConcurrentReconciles is the number of workers (default 2).
	MaxConcurrentReconciles int
}

func (o Options) complete() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 2
	}
	return o
}

// Setup adds the CronJob controller with default options to mgr.
func Setup(mgr *manager.Manager) error { return New(mgr, Options{}) }

// New adds the CronJob controller with opts to mgr.
func New(mgr *manager.Manager, opts Options) error {
	opts = opts.complete()
	r := &reconciler{
		now:      opts.Now,
		reader:   mgr.Reader(),
		client:   mgr.Client(),
		recorder: mgr.EventRecorder(ControllerName),
	}
	err := builder.ControllerManagedBy(mgr).
		Named("cronjob").
		For(builder.Kind[*batchv1.CronJob]()).
		Owns(builder.Kind[*batchv1.Job]()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Logger: mgr.Logger()}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build cronjob controller: %w", err)
	}
	return nil
}
