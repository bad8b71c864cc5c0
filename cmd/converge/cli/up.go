package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/idlemem"
	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/operators/loader"
)

type upOptions struct {
	tracing        tracing.Config
	dataDir        string
	bindAddress    string
	port           int
	etcdServers    []string
	etcdCAFile     string
	etcdCertFile   string
	etcdKeyFile    string
	operators      []string
	noScheduler    bool
	schedConfig    string
	secure         bool
	insecure       bool
	pkiDir         string
	tlsSANs        []string
	tokenFile      string
	auditLog       string
	auditPolicy    string
	maxInflight    int
	maxMutating    int
	encKeys        []string
	perUserPercent int
	maxWatches     int
	encConfig      string
	noNode         bool
	runtime        string
	ctrdAddress    string
	registries     string
	podCIDR        string
	nodeName       string
	nodeIP         string
	serviceCIDR    string
	cniBinDirs     []string
	simulatedNodes int
	cmMetricsAddr  string
	schedMetrics   string
	memoryLimit    string
	keepIdleMemory bool
	http2Server    string
	// apiServerOnly runs storage and the API server without controllers,
	// scheduler or operators (`converge apiserver`).
	apiServerOnly bool
}

func newUpCommand(g *globalOptions) *cobra.Command {
	o := &upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run the bundled control plane (API server on embedded etcd) in this process",
		Long: `Run the bundled control plane in this process: an API server on embedded etcd
(or an external etcd cluster with --etcd-servers). It writes a kubeconfig to
<data-dir>/kubeconfig, prints the export line for it, and runs until Ctrl-C.
Data survives restarts.

It serves HTTPS only and authenticates (client certificates, tokens,
ServiceAccount tokens) and authorizes (RBAC) every request: the CA and the
certificates are created in <data-dir>/pki on first start, and the kubeconfig
carries the CA and admin credentials. --insecure serves plain HTTP where every
client is admin.`,
		Example: `  # Start on the defaults (~/.converge, https://127.0.0.1:6443, certificates in ~/.converge/pki)
  converge up

  # Plain HTTP without authentication (local experiments only)
  converge up --insecure

  # Another data dir and port
  converge up --data-dir /tmp/cv --port 7443

  # Use an external etcd cluster
  converge up --etcd-servers https://10.0.0.1:2379,https://10.0.0.2:2379 \
    --etcd-cafile ca.crt --etcd-certfile client.crt --etcd-keyfile client.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd, g, o) },
	}
	addServerFlags(cmd, o)
	f := cmd.Flags()
	f.BoolVar(&o.noNode, "no-node", false, "do not run the local node agent (process runtime) and service proxy")
	f.StringVar(&o.runtime, "runtime", controlplane.RuntimeProcess, "the local node's container runtime: process (host processes) or containerd (starts its own containerd unless --containerd-address is given)")
	f.StringVar(&o.registries, "registries", "", "registries config for --runtime containerd image pulls (k3s registries.yaml shape: mirrors, logins, TLS; loopback registries need none)")
	f.StringVar(&o.ctrdAddress, "containerd-address", "", "containerd socket for --runtime containerd (default: start a private containerd under <data-dir>/node/containerd)")
	f.StringVar(&o.nodeName, "node-name", "", "name of the local node (default: the hostname; give each control plane running containerd pods on a machine its own, as the node's pod bridge is named after it)")
	f.StringVar(&o.nodeIP, "node-ip", "", "the local node's InternalIP, given to hostNetwork pods and hostPorts, where node ports answer pods (default with --runtime containerd: the address of the host's default-route interface, which pods reach from their network namespaces, unless --insecure, whose unauthenticated node agent stays on loopback; else 127.0.0.1)")
	f.StringVar(&o.podCIDR, "pod-cidr", "", "range the local node's pod IPs come from (default 127.10.0.0/16, with --runtime containerd 10.42.0.0/24; give each control plane on a machine its own)")
	f.StringSliceVar(&o.cniBinDirs, "cni-bin-dir", nil, "directories of the CNI plugins for --runtime containerd (default /usr/lib/cni,/opt/cni/bin)")
	f.StringVar(&o.serviceCIDR, "service-cidr", "", "range Service cluster IPs come from (default 127.96.0.0/12, with --runtime containerd 10.43.0.0/16)")
	f.IntVar(&o.simulatedNodes, "simulated-nodes", 0, "also run this many simulated nodes (no containers), for scale tests")
	f.BoolVar(&o.noScheduler, "no-scheduler", false, "do not run the scheduler (pods stay Pending unless bound by someone else)")
	f.StringVar(&o.schedConfig, "scheduler-config", "", "scheduler configuration file (profiles, plugins, percentageOfNodesToScore)")
	f.StringVar(&o.cmMetricsAddr, "controller-manager-metrics-bind-address", "127.0.0.1:0", "address of the controller manager's /metrics (controller_runtime_*, workqueue_*; port 0: a free one, printed at start; \"\" disables)")
	f.StringVar(&o.schedMetrics, "scheduler-metrics-bind-address", "127.0.0.1:0", "address of the scheduler's /metrics (scheduler_*; port 0: a free one, printed at start; \"\" disables)")
	f.StringArrayVar(&o.operators, "operator", nil, "operator plugin (.so) to load (repeatable); every *.so in <data-dir>/operators is loaded too")
	return cmd
}

// addServerFlags adds the flags `up` and `apiserver` share.
func addServerFlags(cmd *cobra.Command, o *upOptions) {
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "directory for etcd data, the kubeconfig and generated files")
	f.StringVar(&o.bindAddress, "bind-address", "127.0.0.1", "address the API server listens on")
	f.IntVar(&o.port, "port", 6443, "port the API server listens on")
	f.StringSliceVar(&o.etcdServers, "etcd-servers", nil, "client URLs of an external etcd cluster (instead of the embedded one)")
	f.StringVar(&o.etcdCAFile, "etcd-cafile", "", "CA file to verify the external etcd members")
	f.StringVar(&o.etcdCertFile, "etcd-certfile", "", "client certificate for the external etcd")
	f.StringVar(&o.etcdKeyFile, "etcd-keyfile", "", "client key for the external etcd")
	f.BoolVar(&o.insecure, "insecure", false, "serve plain HTTP without authentication or authorization (every client is admin; for local experiments only)")
	f.BoolVar(&o.secure, "secure", false, "deprecated and ignored: HTTPS with authentication and RBAC is the default (see --insecure)")
	f.StringVar(&o.pkiDir, "pki-dir", "", "directory of the CA, ServiceAccount key and certificates (default <data-dir>/pki; share it between API server replicas)")
	f.StringSliceVar(&o.tlsSANs, "tls-san", nil, "extra names or IPs for the serving certificate")
	f.StringVar(&o.tokenFile, "token-auth-file", "", "static token file: token,user,uid,\"group1,group2\"")
	f.StringVar(&o.auditLog, "audit-log-path", "", "write an audit log (JSON lines) to this file")
	f.StringVar(&o.auditPolicy, "audit-policy-file", "", "audit policy (levels None/Metadata/Request/RequestResponse)")
	f.IntVar(&o.maxInflight, "max-requests-inflight", 400, "with --max-mutating-requests-inflight, the seats API Priority and Fairness divides between priority levels (both 0: no limit; not with --insecure)")
	f.IntVar(&o.maxMutating, "max-mutating-requests-inflight", 200, "with --max-requests-inflight, the seats API Priority and Fairness divides between priority levels (both 0: no limit; not with --insecure)")
	f.IntVar(&o.perUserPercent, "max-requests-inflight-per-user-percent", 50, "share of its priority level's seats one flow (a user, with the default FlowSchemas) may hold; its next requests wait in its queue (100: no per-flow share)")
	f.IntVar(&o.maxWatches, "max-watches-per-user", 0, "limit of open watches per user (0: none; 429 beyond; not with --insecure)")
	f.StringArrayVar(&o.encKeys, "encryption-key", nil, "encrypt Secrets at rest with AES-GCM: NAME=BASE64 (16/24/32-byte key; repeatable: the first encrypts, all decrypt; see docs/security.md)")
	addTracingFlags(f, &o.tracing)
	f.StringVar(&o.memoryLimit, "memory-limit", "", "soft limit of the Go heap and runtime memory, e.g. 256Mi (the GOMEMLIMIT setting): the GC runs more often near it instead of letting the heap grow to twice what is live (default: none; CPU for memory)")
	f.BoolVar(&o.keepIdleMemory, "keep-idle-memory", false, "keep the heap memory a burst of requests grew to when the server goes quiet (default: once a burst that allocated at least the live heap is followed by 300ms of quiet, collect and return the free memory to the OS, as the JVM's periodic GC does)")
	f.StringVar(&o.http2Server, "http2-server", http2ServerConverge, "HTTP/2 server implementation: converge (ours) or go (Go's net/http server: the fallback should ours misbehave); --insecure serves HTTP/1.1 only")
	f.StringVar(&o.encConfig, "encryption-provider-config", "", "EncryptionConfiguration file (apiserver.config.k8s.io/v1) selecting resources and providers (aesgcm, aescbc, identity)")
}

// The values of --http2-server.
const (
	http2ServerConverge = "converge"
	http2ServerGo       = "go"
)

// parseHTTP2Server is whether --http2-server selects Go's HTTP/2 server.
func parseHTTP2Server(v string) (goHTTP2 bool, err error) {
	switch v {
	case http2ServerConverge:
		return false, nil
	case http2ServerGo:
		return true, nil
	}
	return false, fmt.Errorf("--http2-server %q: want %s (the default, Converge's HTTP/2 server) or %s (Go's net/http HTTP/2 server)",
		v, http2ServerConverge, http2ServerGo)
}

func runUp(cmd *cobra.Command, g *globalOptions, o *upOptions) error {
	ctx := cmd.Context()
	out := g.stdout
	log := g.logger()
	dataDir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return fmt.Errorf("data dir %q: %w", o.dataDir, err)
	}
	if o.secure && o.insecure {
		return fmt.Errorf("--secure and --insecure contradict each other (--secure is the default and may be left out)")
	}
	if o.secure {
		fmt.Fprintln(g.stderr, "Flag --secure is deprecated: HTTPS with authentication and RBAC is the default")
	}
	pkiDir := o.pkiDir
	if pkiDir != "" {
		if pkiDir, err = filepath.Abs(pkiDir); err != nil {
			return fmt.Errorf("pki dir %q: %w", o.pkiDir, err)
		}
	}
	if o.memoryLimit != "" {
		limit, err := api.Quantity{S: o.memoryLimit}.Value()
		if err != nil || limit <= 0 {
			return fmt.Errorf("--memory-limit %q: want a positive quantity such as 512Mi", o.memoryLimit)
		}
		debug.SetMemoryLimit(limit)
	}
	goHTTP2, err := parseHTTP2Server(o.http2Server)
	if err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(out, "Starting Converge (data dir %s)\n", dataDir)
	controllers := []string{"*"}
	if o.apiServerOnly {
		controllers, o.operators, o.noScheduler, o.noNode, o.simulatedNodes = nil, nil, true, true, 0
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Tracing: o.tracing, GoHTTP2: goHTTP2,
		DataDir: dataDir, EtcdServers: o.etcdServers, EtcdCAFile: o.etcdCAFile, EtcdCertFile: o.etcdCertFile,
		EtcdKeyFile: o.etcdKeyFile, BindAddress: o.bindAddress, Port: o.port, Logger: log, Controllers: controllers, Operators: o.operators,
		Scheduler: !o.noScheduler, SchedulerConfig: o.schedConfig, ControllerManagerMetricsAddress: o.cmMetricsAddr, SchedulerMetricsAddress: o.schedMetrics, LocalNode: !o.noNode, NodeName: o.nodeName, NodeIP: o.nodeIP, NodeRuntime: o.runtime, ContainerdAddress: o.ctrdAddress, RegistriesFile: o.registries, PodCIDR: o.podCIDR, ServiceCIDR: o.serviceCIDR, CNIBinDirs: o.cniBinDirs, SimulatedNodes: o.simulatedNodes,
		Secure: !o.insecure, PKIDir: pkiDir, ExtraSANs: o.tlsSANs, TokenFile: o.tokenFile, AuditLogPath: o.auditLog, AuditPolicyFile: o.auditPolicy,
		MaxReadOnlyInFlight: o.maxInflight, MaxMutatingInFlight: o.maxMutating,
		PerUserInFlightPercent: o.perUserPercent, MaxWatchesPerUser: o.maxWatches,
		EncryptionKeys: o.encKeys, EncryptionConfigFile: o.encConfig,
		Progress: func(step string, took time.Duration) {
			fmt.Fprintf(out, "  ✓ %-12s %s\n", step, took.Round(time.Millisecond))
		},
	})
	if err != nil {
		return fmt.Errorf("%w\nIs another converge already using port %d or data dir %s? Try --port or --data-dir", err, o.port, dataDir)
	}
	defer func() {
		t := time.Now()
		if err := cp.Close(); err != nil {
			log.Error(err, "Shutdown")
		}
		fmt.Fprintf(out, "Converge stopped in %s\n", time.Since(t).Round(time.Millisecond))
	}()
	if !o.keepIdleMemory {
		idleCtx, stopIdle := context.WithCancel(ctx)
		idleDone := make(chan struct{})
		go func() { defer close(idleDone); idlemem.Run(idleCtx, log.WithName("idlemem"), idlemem.Options{}) }()
		defer func() { stopIdle(); <-idleDone }()
	}
	kubeconfig := filepath.Join(dataDir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nexport KUBECONFIG=%s\n", kubeconfig)
	for _, r := range cp.Operators() {
		mark := "✓"
		switch {
		case r.State == loader.Superseded:
			mark = "·"
		case r.Error != "":
			mark = "✗"
		}
		fmt.Fprintf(out, "  %s operator %s (%s) %s\n", mark, cmp.Or(r.Name, "?"), r.Path, r.Error)
	}
	printComponentMetrics(out, cp)
	if login, err := cp.DashboardLoginURL(); err == nil {
		fmt.Fprintf(out, "Dashboard: %s\n  one-time login link (valid 5 minutes; later: converge dashboard): %s\n", cp.DashboardURL(), login)
	}
	fmt.Fprintf(out, "Converge is ready at %s (started in %s). Press Ctrl-C to stop.\n", cp.URL(), time.Since(start).Round(time.Millisecond))
	select {
	case <-ctx.Done():
		fmt.Fprintln(out, "\nShutting down...")
		return nil
	case err := <-cp.Err():
		return err
	}
}

// printComponentMetrics prints where the controller manager's and the
// scheduler's /metrics listen, waiting briefly for them to bind.
func printComponentMetrics(out io.Writer, cp *controlplane.ControlPlane) {
	for _, c := range []struct {
		name string
		addr func() string
	}{{"controller manager", cp.ControllerManagerMetricsAddr}, {"scheduler", cp.SchedulerMetricsAddr}} {
		deadline := time.Now().Add(2 * time.Second)
		addr := c.addr()
		for addr == "" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			addr = c.addr()
		}
		if addr != "" {
			fmt.Fprintf(out, "  %s metrics: http://%s/metrics\n", c.name, addr)
		}
	}
}
