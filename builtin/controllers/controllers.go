package controllers

import (
	"fmt"
	"slices"

	"github.com/converge-dev/converge/builtin/controllers/cronjob"
	"github.com/converge-dev/converge/builtin/controllers/daemonset"
	"github.com/converge-dev/converge/builtin/controllers/deployment"
	"github.com/converge-dev/converge/builtin/controllers/disruption"
	"github.com/converge-dev/converge/builtin/controllers/endpoints"
	"github.com/converge-dev/converge/builtin/controllers/endpointslice"
	"github.com/converge-dev/converge/builtin/controllers/endpointslicemirroring"
	"github.com/converge-dev/converge/builtin/controllers/ephemeral"
	"github.com/converge-dev/converge/builtin/controllers/garbagecollector"
	"github.com/converge-dev/converge/builtin/controllers/job"
	"github.com/converge-dev/converge/builtin/controllers/namespace"
	"github.com/converge-dev/converge/builtin/controllers/nodelifecycle"
	"github.com/converge-dev/converge/builtin/controllers/podautoscaler"
	"github.com/converge-dev/converge/builtin/controllers/podgc"
	"github.com/converge-dev/converge/builtin/controllers/replicaset"
	"github.com/converge-dev/converge/builtin/controllers/resourcequota"
	"github.com/converge-dev/converge/builtin/controllers/serviceaccount"
	"github.com/converge-dev/converge/builtin/controllers/statefulset"
	"github.com/converge-dev/converge/builtin/controllers/volumebinder"
	"github.com/converge-dev/converge/framework/manager"
)

// Controller is one built-in controller: a name users can select and the function
// that adds it to a manager.
type Controller struct {
	Name  string
	Setup func(mgr *manager.Manager) error
}

// All returns every built-in controller in start order.
func All() []Controller {
	return []Controller{
		// Each controller package adds exactly one line here.
		{Name: "endpointslice", Setup: endpointslice.Setup},
		{Name: "endpoints", Setup: endpoints.Setup},
		{Name: endpointslicemirroring.Name, Setup: endpointslicemirroring.Setup},
		{Name: "nodelifecycle", Setup: nodelifecycle.Setup},
		{Name: podgc.Name, Setup: podgc.Setup},
		{Name: "garbagecollector", Setup: garbagecollector.Setup},
		{Name: "namespace", Setup: namespace.Setup},
		{Name: "serviceaccount", Setup: serviceaccount.Setup},
		{Name: "job", Setup: job.Setup},
		{Name: "cronjob", Setup: cronjob.Setup},
		{Name: "daemonset", Setup: daemonset.Setup},
		{Name: "statefulset", Setup: statefulset.Setup},
		{Name: volumebinder.Name, Setup: volumebinder.Setup},
		{Name: ephemeral.Name, Setup: ephemeral.Setup},
		{Name: "replicaset", Setup: replicaset.Setup},
		{Name: replicaset.ReplicationControllerName, Setup: replicaset.SetupReplicationControllers},
		{Name: "deployment", Setup: deployment.Setup},
		{Name: podautoscaler.Name, Setup: podautoscaler.Setup},
		{Name: resourcequota.Name, Setup: resourcequota.Setup},
		{Name: disruption.Name, Setup: disruption.Setup},
	}
}

// Names returns the names of every built-in controller.
func Names() []string {
	var out []string
	for _, c := range All() {
		out = append(out, c.Name)
	}
	return out
}

// Options tune the controllers that have settings; the zero value means every
// controller's defaults.
type Options struct {
	// NodeLifecycle configures the node lifecycle controller (grace periods,
	// eviction rates).
	NodeLifecycle nodelifecycle.Options
	// PodGC configures the pod garbage collector (period, quarantine of
	// missing nodes, terminated pod threshold).
	PodGC podgc.Options
	// HorizontalPodAutoscaler configures the autoscaler (sync period,
	// downscale stabilization, tolerance, CPU initialization).
	HorizontalPodAutoscaler podautoscaler.Options
}

// Setup adds the named controllers to mgr (all of them when names is nil) with
// their default settings.
func Setup(mgr *manager.Manager, names []string) error {
	return SetupWithOptions(mgr, names, Options{})
}

// SetupWithOptions adds the named controllers to mgr (all of them when names is
// nil), configured by opts.
func SetupWithOptions(mgr *manager.Manager, names []string, opts Options) error {
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			return fmt.Errorf("unknown controller %q (known: %v)", n, Names())
		}
	}
	for _, c := range All() {
		if names != nil && !slices.Contains(names, c.Name) {
			continue
		}
		if err := c.SetupWith(mgr, opts); err != nil {
			return fmt.Errorf("set up controller %s: %w", c.Name, err)
		}
	}
	return nil
}

// SetupWith adds c to mgr, configured by opts where c has settings.
func (c Controller) SetupWith(mgr *manager.Manager, opts Options) error {
	switch c.Name {
	case "nodelifecycle":
		return nodelifecycle.New(mgr, opts.NodeLifecycle)
	case podgc.Name:
		return podgc.New(mgr, opts.PodGC)
	case podautoscaler.Name:
		return podautoscaler.New(mgr, opts.HorizontalPodAutoscaler)
	}
	return c.Setup(mgr)
}
