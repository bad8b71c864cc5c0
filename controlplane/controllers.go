package controlplane

import (
	"fmt"
	"github.com/converge-dev/converge/framework/tracing"
	"slices"
	"time"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/controllers"
	"github.com/converge-dev/converge/builtin/controllers/nodelifecycle"
	"github.com/converge-dev/converge/builtin/controllers/podautoscaler"
	"github.com/converge-dev/converge/builtin/security/csr"
	"github.com/converge-dev/converge/builtin/security/rootca"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
)

// DefaultNodeMonitorGracePeriod is ControllerManagerOptions'
// NodeMonitorGracePeriod when left zero.
const DefaultNodeMonitorGracePeriod = nodelifecycle.DefaultNodeMonitorGracePeriod

// ControllerManagerOptions configure NewControllerManager. The zero value runs
// every controller with its defaults.
type ControllerManagerOptions struct {
	// Controllers selects controllers by name (nil: all of ControllerNames).
	Controllers []string
	// NodeMonitorGracePeriod is how long a node may go without renewing its
	// Lease before the node lifecycle controller marks it Unknown and taints it
	// unreachable (default DefaultNodeMonitorGracePeriod).
	NodeMonitorGracePeriod time.Duration
	// RootCA is the CA bundle published as the kube-root-ca.crt ConfigMap in
	// every namespace; when empty the publisher does not run (a control plane
	// without TLS has no CA, and its pods get no API access volume needing one).
	RootCA []byte
	// Sign signs approved CertificateSigningRequests with the cluster CA; nil
	// leaves them approved but unsigned.
	Sign csr.SignFunc
	// HorizontalPodAutoscaler configures the autoscaler controller (its
	// kube-controller-manager flags: sync period, downscale stabilization,
	// tolerance, CPU initialization period, initial readiness delay).
	HorizontalPodAutoscaler HorizontalPodAutoscalerOptions
	// Manager configures the manager (logger, metrics and health addresses,
	// leader election); its Scheme defaults to every built-in kind.
	Manager manager.Options
	// Tracing traces reconciles when Manager has no TracerProvider.
	Tracing tracing.Config
}

// HorizontalPodAutoscalerOptions configure the autoscaler controller.
type HorizontalPodAutoscalerOptions = podautoscaler.Options

// controller is one entry of the controller manager's list.
type controller struct {
	name  string
	setup func(mgr *manager.Manager, o *ControllerManagerOptions) error
	// runs reports whether the controller can run with o (nil: always).
	runs func(o *ControllerManagerOptions) bool
}

// controllerList is the one list of controllers a controller manager runs,
// in start order: the built-in workload and cluster controllers, then the
// security ones (CSR approval and signing, the root CA publisher).
func controllerList() []controller {
	var out []controller
	for _, c := range controllers.All() {
		out = append(out, controller{name: c.Name, setup: func(mgr *manager.Manager, o *ControllerManagerOptions) error {
			return c.SetupWith(mgr, controllers.Options{
				NodeLifecycle:           nodelifecycle.Options{NodeMonitorGracePeriod: o.NodeMonitorGracePeriod},
				HorizontalPodAutoscaler: o.HorizontalPodAutoscaler})
		}})
	}
	return append(out,
		controller{name: csr.Name, setup: func(mgr *manager.Manager, o *ControllerManagerOptions) error {
			return csr.Setup(mgr, csr.Options{Sign: o.Sign})
		}},
		controller{name: rootca.Name,
			setup: func(mgr *manager.Manager, o *ControllerManagerOptions) error { return rootca.Setup(mgr, o.RootCA) },
			runs:  func(o *ControllerManagerOptions) bool { return len(o.RootCA) > 0 },
		},
	)
}

// ControllerNames returns the name of every controller a controller manager
// can run.
func ControllerNames() []string {
	var out []string
	for _, c := range controllerList() {
		out = append(out, c.name)
	}
	return out
}

// NewControllerManager returns a manager, with the client configuration cfg,
// that runs the selected controllers, and the names of those it set up. Both
// `converge up` and `converge controller-manager` build theirs here, so a
// split deployment runs exactly the controllers of the bundled one. Start the
// manager to run them.
func NewControllerManager(cfg *client.Config, o ControllerManagerOptions) (*manager.Manager, []string, error) {
	for _, n := range o.Controllers {
		if !slices.Contains(ControllerNames(), n) {
			return nil, nil, fmt.Errorf("unknown controller %q (known: %v)", n, ControllerNames())
		}
	}
	if o.Manager.Scheme == nil {
		sch, err := all.NewScheme()
		if err != nil {
			return nil, nil, fmt.Errorf("build scheme: %w", err)
		}
		o.Manager.Scheme = sch
	}
	if o.Manager.DefaultTransform == nil {
		// No built-in controller reads managedFields (an update without them
		// keeps the server's), so the caches do not hold them.
		o.Manager.DefaultTransform = cache.StripManagedFields
	}
	mgr, err := newTracedManager(cfg, o.Manager, o.Tracing, "controller-manager")
	if err != nil {
		return nil, nil, fmt.Errorf("create controller manager: %w", err)
	}
	var started []string
	for _, c := range controllerList() {
		if o.Controllers != nil && !slices.Contains(o.Controllers, c.name) {
			continue
		}
		if c.runs != nil && !c.runs(&o) {
			continue
		}
		if err := c.setup(mgr, &o); err != nil {
			return nil, nil, fmt.Errorf("set up controller %s: %w", c.name, err)
		}
		started = append(started, c.name)
	}
	return mgr, started, nil
}
