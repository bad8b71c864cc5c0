package run

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/healthz"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/webhook"
)

// Options configure Run. The zero value means defaults.
type Options struct {
	// Kubeconfig is the kubeconfig file ("" : $KUBECONFIG, the in-cluster
	// service account, then ~/.kube/config).
	Kubeconfig string
	// Context is the kubeconfig context ("" : the current one).
	Context string
	// MetricsBindAddress serves /metrics (default ":8080"; "0" disables it).
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz (default ":8081";
	// "0" disables them).
	HealthProbeBindAddress string
	// DisableLeaderElection runs without the Lease (one replica only).
	DisableLeaderElection bool
	// LeaderElectionNamespace holds the Lease (default "default").
	LeaderElectionNamespace string
	// WebhookBindAddress is where the operator's webhooks are served (default
	// "127.0.0.1:9443"; only operators implementing operators.Webhooks serve).
	WebhookBindAddress string
	// WebhookHost is the host name or IP the API server dials to reach the
	// webhooks (default: the bound IP, 127.0.0.1 when binding every address).
	WebhookHost string
	// CertDir holds the operator's own webhook CA (webhook.SelfSignedCA;
	// default <user config dir>/converge/operators/<name>). Replicas must share
	// it.
	CertDir string
	// Logger receives all logs (default: text to stderr).
	Logger *logr.Logger
	// Started, when set, is called with the manager once the operator is
	// installed and the manager is about to start (tests use it to learn the
	// bound addresses).
	Started func(mgr *manager.Manager)
}

func (o *Options) complete() {
	if o.MetricsBindAddress == "" {
		o.MetricsBindAddress = ":8080"
	}
	if o.MetricsBindAddress == "0" {
		o.MetricsBindAddress = ""
	}
	if o.HealthProbeBindAddress == "" {
		o.HealthProbeBindAddress = ":8081"
	}
	if o.HealthProbeBindAddress == "0" {
		o.HealthProbeBindAddress = ""
	}
	if o.Logger == nil {
		l := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
		o.Logger = &l
	}
}

// webhookOptions configures the webhook server of op: its own CA in CertDir
// (loaded or created only when op has webhooks).
func (o *Options) webhookOptions(op operators.Operator) (webhook.Options, error) {
	wopts := webhook.Options{BindAddress: o.WebhookBindAddress, Host: o.WebhookHost}
	if wopts.BindAddress == "" {
		wopts.BindAddress = "127.0.0.1:9443"
	}
	if wh, ok := op.(operators.Webhooks); !ok || len(wh.Webhooks()) == 0 {
		return wopts, nil
	}
	dir := o.CertDir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return wopts, fmt.Errorf("find a directory for the webhook CA (set --cert-dir): %w", err)
		}
		dir = filepath.Join(base, "converge", "operators", op.Name())
	}
	ca, err := webhook.SelfSignedCA(dir, op.Name()+"-webhook-ca")
	if err != nil {
		return wopts, err
	}
	wopts.Issuer = ca
	return wopts, nil
}

// Run runs op until ctx ends (then it returns nil) or something fails.
func Run(ctx context.Context, op operators.Operator, opts Options) error {
	opts.complete()
	name := op.Name()
	log := opts.Logger.WithName(name)
	cfg, ns, err := kubeconfig.FromEnvironment(opts.Kubeconfig, opts.Context)
	if err != nil {
		return fmt.Errorf("operator %s: %w", name, err)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = name + "-operator"
	}
	leNS := opts.LeaderElectionNamespace
	if leNS == "" {
		leNS = ns
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                  scheme.New(),
		Logger:                  log,
		MetricsBindAddress:      opts.MetricsBindAddress,
		HealthProbeBindAddress:  opts.HealthProbeBindAddress,
		LeaderElection:          !opts.DisableLeaderElection,
		LeaderElectionID:        name + "-operator",
		LeaderElectionNamespace: leNS,
	})
	if err != nil {
		return fmt.Errorf("operator %s: create manager: %w", name, err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informers", mgr.CacheSyncCheck()); err != nil {
		return err
	}
	wopts, err := opts.webhookOptions(op)
	if err != nil {
		return fmt.Errorf("operator %s: %w", name, err)
	}
	if err := webhook.Install(ctx, mgr, op, wopts); err != nil {
		return err
	}
	if opts.Started != nil {
		opts.Started(mgr)
	}
	log.Info("Starting operator", "leaderElection", !opts.DisableLeaderElection,
		"metrics", opts.MetricsBindAddress, "health", opts.HealthProbeBindAddress)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("operator %s: %w", name, err)
	}
	return nil
}

// ParseFlags parses the standalone flags from args into Options.
func ParseFlags(name string, args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	fs.StringVar(&o.Context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", "address of /metrics (0 disables it)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (0 disables them)")
	fs.StringVar(&o.WebhookBindAddress, "webhook-bind-address", "127.0.0.1:9443", "address the webhooks are served on (operators with webhooks)")
	fs.StringVar(&o.WebhookHost, "webhook-host", "", "host name or IP the API server dials for webhooks (default: the bound IP)")
	fs.StringVar(&o.CertDir, "cert-dir", "", "directory of the operator's webhook CA (default: <user config dir>/converge/operators/<name>)")
	leaderElect := fs.Bool("leader-elect", true, "hold a Lease so that only one replica reconciles")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the kubeconfig's namespace)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.DisableLeaderElection = !*leaderElect
	return o, nil
}

// Main is the whole main function of a standalone operator: flags from
// os.Args, SIGINT/SIGTERM stop it, any failure exits 1.
func Main(op operators.Operator) {
	opts, err := ParseFlags(op.Name(), os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, op, opts); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(1) //nolint:gocritic // stop() already ran
	}
}
