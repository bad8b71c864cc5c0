package cronjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
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
	c := mgr.Client()
	rec := mgr.EventRecorder(ControllerName)
	r := &reconciler{
		now: opts.Now,
		getCronJob: func(ctx context.Context, key client.ObjectKey) (*batchv1.CronJob, error) {
			cj := &batchv1.CronJob{}
			if err := c.Get(ctx, key, cj); err != nil {
				return nil, err
			}
			return cj, nil
		},
		listJobs: func(ctx context.Context, ns string) ([]batchv1.Job, error) {
			l := &batchv1.JobList{}
			if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			return l.Items, nil
		},
		createJob: func(ctx context.Context, j *batchv1.Job) error { return c.Create(ctx, j) },
		deleteJob: func(ctx context.Context, j *batchv1.Job) error {
			return client.IgnoreNotFound(c.Delete(ctx, j, client.PropagationPolicy(api.DeletePropagationBackground)))
		},
		updateStatus: func(ctx context.Context, cj *batchv1.CronJob) error { return c.Status().Update(ctx, cj) },
		event: func(ctx context.Context, obj api.Object, typ, reason, msg string) {
			rec.Event(ctx, obj, typ, reason, msg)
		},
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
