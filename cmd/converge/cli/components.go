package cli

import (
	"errors"
	"fmt"
	"github.com/converge-dev/converge/framework/tracing"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
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

// controllerManagerFlags are the flags of `converge controller-manager`.
type controllerManagerFlags struct {
	names                               []string
	le                                  leaderElectFlags
	metricsAddr, healthAddr             string
	nodeMonitorGrace                    time.Duration
	hpaSync, hpaDownscale               time.Duration
	rootCAFile, signingCert, signingKey string
	tracing                             tracing.Config
	fs                                  *pflag.FlagSet
}

func (f *controllerManagerFlags) add(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringSliceVar(&f.names, "controllers", nil, fmt.Sprintf("controllers to run (default all: %v)", controlplane.ControllerNames()))
	f.le.add(fs, "runs the controllers", "kube-controller-manager")
	fs.DurationVar(&f.nodeMonitorGrace, "node-monitor-grace-period", controlplane.DefaultNodeMonitorGracePeriod,
		"how long a node may go without renewing its Lease before it is marked Unknown and tainted unreachable")
	fs.DurationVar(&f.hpaSync, "horizontal-pod-autoscaler-sync-period", 15*time.Second, "how often each HorizontalPodAutoscaler is synced")
	fs.DurationVar(&f.hpaDownscale, "horizontal-pod-autoscaler-downscale-stabilization", 5*time.Minute,
		"scale-down stabilization window of HorizontalPodAutoscalers that set none")
	fs.StringVar(&f.rootCAFile, "root-ca-file", "", "CA bundle published as the kube-root-ca.crt ConfigMap in every namespace (default: the kubeconfig's CA; none: not published)")
	fs.StringVar(&f.signingCert, "cluster-signing-cert-file", filepath.Join(defaultDataDir(), "pki", pki.CACertFile), "cluster CA certificate that signs approved CertificateSigningRequests")
	fs.StringVar(&f.signingKey, "cluster-signing-key-file", filepath.Join(defaultDataDir(), "pki", pki.CAKeyFile), "key of --cluster-signing-cert-file")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "127.0.0.1:10257", "address of /metrics (\"\" disables)")
	fs.StringVar(&f.healthAddr, "health-probe-bind-address", "127.0.0.1:10258", "address of /healthz and /readyz (\"\" disables)")
	addTracingFlags(fs, &f.tracing)
}

// options are the controller manager's options for the cluster of cfg.
func (f *controllerManagerFlags) options(cfg *rest.Config, log logr.Logger, stderr io.Writer) (controlplane.ControllerManagerOptions, error) {
	o := controlplane.ControllerManagerOptions{
		NodeMonitorGracePeriod:  f.nodeMonitorGrace,
		Tracing:                 f.tracing,
		HorizontalPodAutoscaler: controlplane.HorizontalPodAutoscalerOptions{SyncPeriod: f.hpaSync, DownscaleStabilization: f.hpaDownscale},
		Manager:                 manager.Options{Logger: log, MetricsBindAddress: f.metricsAddr, HealthProbeBindAddress: f.healthAddr},
	}
	if len(f.names) > 0 {
		o.Controllers = f.names
	}
	f.le.apply(&o.Manager)
	var err error
	if o.RootCA, err = rootCA(cfg, f.rootCAFile); err != nil {
		return o, err
	}
	named := f.fs.Changed("cluster-signing-cert-file") || f.fs.Changed("cluster-signing-key-file")
	ca, err := signingCA(f.signingCert, f.signingKey, named)
	if err != nil {
		return o, err
	}
	if ca != nil {
		o.Sign = ca.SignRequest
	} else {
		fmt.Fprintf(stderr, "No cluster CA key at %s: CertificateSigningRequests will be approved but not signed (pass --cluster-signing-cert-file and --cluster-signing-key-file)\n", f.signingKey)
	}
	return o, nil
}

func newControllerManagerCommand(g *globalOptions) *cobra.Command {
	f := &controllerManagerFlags{}
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run the built-in controllers as their own process (leader-elected)",
		Long: `Run the controllers of converge up as their own process: the same list, built by the same
code, so a split deployment runs exactly what the bundled one runs. CertificateSigningRequests of
joining nodes are approved (after a SubjectAccessReview, as kube-controller-manager does) and signed
with the cluster CA from --cluster-signing-cert-file and --cluster-signing-key-file (default: the
CA in <data-dir>/pki when it is there); without a CA key they are approved but stay unsigned.`,
		Example: `  converge controller-manager --kubeconfig ~/.converge/kubeconfig
  converge controller-manager --controllers deployment,replicaset --leader-elect=false
  converge controller-manager --cluster-signing-cert-file /var/lib/cv/pki/ca.crt --cluster-signing-key-file /var/lib/cv/pki/ca.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := kubeconfig.DefaultEnvironment()
			env.Getenv = g.getenv
			cfg, _, err := env.Load(g.kubeconfig, g.context)
			if err != nil {
				return fmt.Errorf("%w\npass --kubeconfig or set KUBECONFIG", err)
			}
			o, err := f.options(cfg, g.logger().WithName("controller-manager"), g.stderr)
			if err != nil {
				return err
			}
			mgr, _, err := controlplane.NewControllerManager(cfg, o)
			if err != nil {
				return err
			}
			return mgr.Start(cmd.Context())
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// rootCA is the CA bundle the root CA publisher publishes: rootCAFile, else
// the kubeconfig's CA. A control plane without TLS (converge up --insecure)
// has none, and pods there get no API access volume that would need it.
func rootCA(cfg *rest.Config, rootCAFile string) ([]byte, error) {
	if rootCAFile == "" {
		rootCAFile = cfg.TLS.CAFile
	}
	if rootCAFile == "" {
		return cfg.TLS.CAData, nil
	}
	b, err := os.ReadFile(rootCAFile)
	if err != nil {
		return nil, fmt.Errorf("root CA: %w", err)
	}
	return b, nil
}

// signingCA loads the cluster CA that signs CertificateSigningRequests. A
// missing default file means no signer (nil); files the user named must load.
func signingCA(certFile, keyFile string, named bool) (*pki.PKI, error) {
	ca, err := pki.LoadCA(certFile, keyFile)
	if err != nil && !named && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w\ncheck --cluster-signing-cert-file and --cluster-signing-key-file", err)
	}
	return ca, nil
}
