package cli

import (
	"fmt"
	"github.com/converge-dev/converge/framework/tracing"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
)

func newSchedulerCommand(g *globalOptions) *cobra.Command {
	var configFile, metricsAddr, healthAddr string
	var le leaderElectFlags
	var tc tracing.Config
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the scheduler as its own process against an API server (leader-elected)",
		Example: `  converge scheduler --kubeconfig ~/.converge/kubeconfig
  converge scheduler --config scheduler.yaml --leader-elect=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := kubeconfig.DefaultEnvironment()
			env.Getenv = g.getenv
			cfg, _, err := env.Load(g.kubeconfig, g.context)
			if err != nil {
				return fmt.Errorf("%w\npass --kubeconfig or set KUBECONFIG", err)
			}
			o := controlplane.SchedulerOptions{Manager: manager.Options{Logger: g.logger().WithName("scheduler"),
				MetricsBindAddress: metricsAddr, HealthProbeBindAddress: healthAddr}}
			o.Scheduler.ConfigFile = configFile
			o.Tracing = tc
			le.apply(&o.Manager)
			mgr, err := controlplane.NewScheduler(cmd.Context(), cfg, o)
			if err != nil {
				return err
			}
			return mgr.Start(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "scheduler configuration file (profiles with schedulerName, plugins, pluginConfig)")
	le.add(cmd.Flags(), "schedules", "kube-scheduler")
	cmd.Flags().StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:10259", "address of /metrics (scheduler_* and controller-runtime metrics; \"\" disables)")
	addTracingFlags(cmd.Flags(), &tc)
	cmd.Flags().StringVar(&healthAddr, "health-probe-bind-address", "127.0.0.1:10251", "address of /healthz and /readyz (\"\" disables)")
	return cmd
}
