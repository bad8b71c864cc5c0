package manager_test

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/healthz"
	"github.com/converge-dev/converge/framework/manager"
)

// A main function of an operator: leader election, metrics and probes.
func Example() {
	run := func(ctx context.Context, log logr.Logger) error {
		cfg, _, err := kubeconfig.FromEnvironment("", "")
		if err != nil {
			return err
		}
		s, err := all.NewScheme()
		if err != nil {
			return err
		}
		mgr, err := manager.New(cfg, manager.Options{
			Scheme:                  s,
			Logger:                  log,
			MetricsBindAddress:      ":8080",
			HealthProbeBindAddress:  ":8081",
			LeaderElection:          true,
			LeaderElectionID:        "my-operator",
			LeaderElectionNamespace: "operators",
			GracefulShutdownTimeout: 20 * time.Second,
		})
		if err != nil {
			return err
		}
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("informers", mgr.CacheSyncCheck()); err != nil {
			return err
		}
		// builder.ControllerManagedBy(mgr)... adds controllers here.
		return mgr.Start(ctx) // blocks until ctx ends or leadership is lost
	}
	_ = run
}
