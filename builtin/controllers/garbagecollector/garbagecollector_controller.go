package garbagecollector

import (
	"context"
	"fmt"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/controller"
	"github.com/converge-dev/converge/framework/manager"
)

// Name is the controller's name.
const Name = "garbagecollector"

// Options tune the collector. The zero value means defaults.
type Options struct {
	// Workers is the number of concurrent reconciles (default 4).
	Workers int
	// DiscoveryInterval is how often discovery is re-read (default 10 s); a
	// change to a CustomResourceDefinition also triggers a re-read.
	DiscoveryInterval time.Duration
}

func (o *Options) complete() {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.DiscoveryInterval <= 0 {
		o.DiscoveryInterval = 10 * time.Second
	}
}

// Setup adds the garbage collector with default options to mgr.
func Setup(mgr *manager.Manager) error { return SetupWithOptions(mgr, Options{}) }

// SetupWithOptions adds the garbage collector to mgr.
func SetupWithOptions(mgr *manager.Manager, opts Options) error {
	opts.complete()
	c := mgr.Client()
	g := newGraph()
	gb := newGraphBuilder(c, g, opts.DiscoveryInterval, mgr.Logger().WithValues("controller", Name))
	rec := mgr.EventRecorder("garbage-collector-controller")
	r := &reconciler{graph: g, synced: gb, objects: serverObjects{c}, recorder: rec}
	ctrl, err := controller.New(Name, r, controller.Options{
		MaxConcurrentReconciles: opts.Workers,
		Logger:                  mgr.Logger(),
		Registry:                mgr.Registry(),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	if err := ctrl.Watch(gb); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	if err := mgr.Add(ctrl); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// serverObjects is liveObjects on the API server.
type serverObjects struct{ c *client.Client }

func (s serverObjects) Get(ctx context.Context, obj *api.Unstructured) error {
	return s.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

func (s serverObjects) Update(ctx context.Context, obj *api.Unstructured) error {
	return s.c.Update(ctx, obj)
}

func (s serverObjects) Delete(ctx context.Context, obj *api.Unstructured, policy string) error {
	pc := client.Preconditions{UID: api.Ptr(obj.GetUID())}
	if rv := obj.GetResourceVersion(); rv != "" {
		pc.ResourceVersion = &rv
	}
	return s.c.Delete(ctx, obj, client.PropagationPolicy(policy), pc)
}

func (s serverObjects) Namespaced(ctx context.Context, gvk api.GroupVersionKind) (bool, error) {
	m, err := s.c.RESTMapper().RESTMapping(ctx, gvk)
	if err != nil {
		return false, fmt.Errorf("map %s: %w", gvk, err)
	}
	return m.Namespaced, nil
}
