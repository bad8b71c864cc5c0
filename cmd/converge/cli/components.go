package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/controllers"
	"github.com/converge-dev/converge/builtin/controllers/nodelifecycle"
	"github.com/converge-dev/converge/builtin/security/rootca"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/manager"
)

func newAPIServerCommand(g *globalOptions) *cobra.Command {
	o := &upOptions{apiServerOnly: true}
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: "Run only the API server (several replicas may share an etcd cluster)",
		Long: `Run only the API server: storage (an external etcd cluster with --etcd-servers, or the
embedded one), the built-in resources and the CRD registry. Each replica runs its own watch cache;
compaction is coordinated through etcd so any number of replicas may run. Controllers and the
scheduler run elsewhere: converge controller-manager, converge scheduler.

It serves HTTPS with authentication and RBAC like converge up (--insecure opts out). Replicas
must share one CA and ServiceAccount signing key: point them at one --pki-dir (start the first
replica before the others, so that only it creates the CA), or copy the first one's
<data-dir>/pki to the others before they start.`,
		Example: `  converge apiserver --etcd-servers http://127.0.0.11:2379,http://127.0.0.12:2379 --port 6443 --data-dir /var/lib/cv/api1 --pki-dir /var/lib/cv/pki
  converge apiserver --etcd-servers http://127.0.0.11:2379 --port 6444 --data-dir /var/lib/cv/api2 --pki-dir /var/lib/cv/pki`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd, g, o) },
	}
	addServerFlags(cmd, o)
	return cmd
}

func newControllerManagerCommand(g *globalOptions) *cobra.Command {
	var names []string
	var le leaderElectFlags
	var metricsAddr, healthAddr string
	var nodeMonitorGrace time.Duration
	var rootCAFile string
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the built-in controllers as their own process (leader-elected)",
		Example: `  converge controller-manager --kubeconfig ~/.converge/kubeconfig
  converge controller-manager --controllers deployment,replicaset --leader-elect=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := kubeconfig.DefaultEnvironment()
			env.Getenv = g.getenv
			cfg, _, err := env.Load(g.kubeconfig, g.context)
			if err != nil {
				return fmt.Errorf("%w\npass --kubeconfig or set KUBECONFIG", err)
			}
			sch, err := all.NewScheme()
			if err != nil {
				return err
			}
			mo := manager.Options{Scheme: sch, Logger: g.logger().WithName("controller-manager"),
				MetricsBindAddress: metricsAddr, HealthProbeBindAddress: healthAddr}
			le.apply(&mo)
			mgr, err := manager.New(cfg, mo)
			if err != nil {
				return err
			}
			if len(names) == 0 {
				names = nil
			}
			opts := controllers.Options{NodeLifecycle: nodelifecycle.Options{NodeMonitorGracePeriod: nodeMonitorGrace}}
			if err := controllers.SetupWithOptions(mgr, names, opts); err != nil {
				return err
			}
			if err := setupRootCAPublisher(mgr, cfg, rootCAFile); err != nil {
				return err
			}
			return mgr.Start(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&names, "controllers", nil, fmt.Sprintf("controllers to run (default all: %v)", controllers.Names()))
	le.add(f, "runs the controllers", "kube-controller-manager")
	f.DurationVar(&nodeMonitorGrace, "node-monitor-grace-period", nodelifecycle.DefaultNodeMonitorGracePeriod,
		"how long a node may go without renewing its Lease before it is marked Unknown and tainted unreachable")
	f.StringVar(&rootCAFile, "root-ca-file", "", "CA bundle published as the kube-root-ca.crt ConfigMap in every namespace (default: the kubeconfig's CA; none: not published)")
	f.StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:10257", "address of /metrics (\"\" disables)")
	f.StringVar(&healthAddr, "health-probe-bind-address", "127.0.0.1:10258", "address of /healthz and /readyz (\"\" disables)")
	return cmd
}

// setupRootCAPublisher adds the root CA publisher (kube-root-ca.crt in every
// namespace) when there is a CA: rootCAFile, else the kubeconfig's. A control
// plane without TLS (converge up --insecure) has none, and pods there get no
// API access volume that would need it.
func setupRootCAPublisher(mgr *manager.Manager, cfg *rest.Config, rootCAFile string) error {
	if rootCAFile == "" {
		rootCAFile = cfg.TLS.CAFile
	}
	ca := cfg.TLS.CAData
	if rootCAFile != "" {
		b, err := os.ReadFile(rootCAFile)
		if err != nil {
			return fmt.Errorf("root CA: %w", err)
		}
		ca = b
	}
	if len(ca) == 0 {
		return nil
	}
	return rootca.Setup(mgr, ca)
}
