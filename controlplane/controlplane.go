package controlplane

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/trace"

	"github.com/converge-dev/converge/builtin/aggregator"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	"github.com/converge-dev/converge/builtin/clusterdns"
	"github.com/converge-dev/converge/builtin/controllers/volumebinder"
	"github.com/converge-dev/converge/builtin/dashboard"
	builtinopenapi "github.com/converge-dev/converge/builtin/openapi"
	"github.com/converge-dev/converge/builtin/security"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/flowcontrol"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/storage"
	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlp"
	"github.com/converge-dev/converge/operators/loader"
)

// Options configure a control plane. The zero value of every field means its
// default, except that DataDir (or EtcdServers) is required.
type Options struct {
	// DataDir holds the embedded etcd data (DataDir/etcd) and generated files.
	DataDir string
	// EtcdServers points at an external etcd cluster instead of the embedded one.
	EtcdServers []string
	// EtcdCAFile, EtcdCertFile and EtcdKeyFile secure the external etcd connection.
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// NoFsync runs the embedded etcd without fsync (tests only).
	NoFsync bool
	// GoHTTP2 serves HTTP/2 with Go's server instead of our own
	// (apiserver.ServingOptions.GoHTTP2): the fallback, and the other side
	// of A/B benchmarks.
	GoHTTP2 bool
	// BindAddress is the API server's listen address (default 127.0.0.1).
	BindAddress string
	// Port is the API server's port; 0 picks a free one.
	Port int
	// Logger receives all logs.
	Logger logr.Logger
	// CompactionInterval is how often etcd history is compacted (default 5 min;
	// negative disables compaction).
	CompactionInterval time.Duration
	// ShutdownGrace bounds how long Close lets open requests and HTTP/2
	// connections finish (default 3s; negative: none, as for a throwaway
	// control plane whose clients are gone).
	ShutdownGrace time.Duration
	// KubernetesVersion reported by /version (default v1.32.0).
	KubernetesVersion string
	// BookmarkInterval for watches (default 30 s).
	BookmarkInterval time.Duration
	// Controllers selects the controllers to run (names from ControllerNames):
	// nil runs none (the API server alone, as testenv does by default),
	// []string{"*"} runs all of them.
	Controllers []string
	// Scheduler runs the scheduler (default profile, or SchedulerConfig).
	Scheduler bool
	// SchedulerConfig is a scheduler configuration file (profiles, plugins).
	SchedulerConfig string
	// ControllerManagerMetricsAddress and SchedulerMetricsAddress are where
	// the controller manager's and the scheduler's /metrics are served
	// (controller-runtime's names, workqueue_* and scheduler_*; as their split
	// commands serve them); "" serves none, a port of 0 picks a free one
	// (ControllerManagerMetricsAddr and SchedulerMetricsAddr tell which).
	ControllerManagerMetricsAddress, SchedulerMetricsAddress string
	// Secure serves HTTPS only, with client certificates and tokens, RBAC,
	// admission webhooks and (when AuditLogPath is set) an audit log; the CA, the
	// serving and admin certificates live in DataDir/pki.
	Secure bool
	// ExtraSANs are added to the serving certificate.
	ExtraSANs []string
	// PKIDir holds the CA, the ServiceAccount signing key and the serving and
	// admin certificates (default DataDir/pki). API server replicas that point
	// at one directory share the CA and the ServiceAccount key.
	PKIDir string
	// TokenFile, AuditLogPath and AuditPolicyFile configure authentication and audit.
	TokenFile, AuditLogPath, AuditPolicyFile string
	// MaxMutatingInFlight and MaxReadOnlyInFlight limit concurrent requests (429).
	MaxMutatingInFlight, MaxReadOnlyInFlight int
	// PerUserInFlightPercent is the share of each in-flight budget one user may
	// hold (default 50); MaxWatchesPerUser bounds each user's open watches.
	PerUserInFlightPercent, MaxWatchesPerUser int
	// EncryptionKeys encrypt Secrets at rest with AES-GCM ("NAME=BASE64" or
	// "BASE64"; the first encrypts, all decrypt, plaintext still reads).
	EncryptionKeys []string
	// EncryptionConfigFile is an EncryptionConfiguration (instead of EncryptionKeys).
	EncryptionConfigFile string
	// ServiceCIDR is the IPv4 range Service cluster IPs come from (default
	// 127.96.0.0/12: loopback, so the node agents' service proxy can listen on
	// them; with NodeRuntime RuntimeContainerd DefaultContainerdServiceCIDR,
	// routable from pods in their own network namespaces).
	ServiceCIDR string
	// NodePortRange is the Service node port range (default 30000-32767).
	NodePortRange string
	// ServiceRepairInterval is how often leaked or missing Service IP and node
	// port reservations are repaired (default 3 min).
	ServiceRepairInterval time.Duration
	// LocalNode runs a node agent on this machine (by default with the process
	// runtime: pods' containers are host processes and each pod gets a loopback
	// IP) and the service proxy that makes Service cluster IPs work here.
	LocalNode bool
	// NodeRuntime is the local node's container runtime: RuntimeProcess
	// (default) or RuntimeContainerd.
	NodeRuntime string
	// ContainerdAddress is the containerd socket of RuntimeContainerd; empty
	// starts a private containerd under DataDir/node/containerd.
	ContainerdAddress string
	// RegistriesFile configures image pulls of RuntimeContainerd (k3s
	// registries.yaml shape: mirrors, logins, TLS); empty reaches registries
	// directly (loopback ones over plain HTTP).
	RegistriesFile string
	// CNIBinDirs are where the local containerd node looks for CNI plugins
	// (default /usr/lib/cni, then /opt/cni/bin).
	CNIBinDirs []string
	// NodeName names the local node (default: the hostname).
	NodeName string
	// NodeIP is the local node's InternalIP (the kubelet's --node-ip; default
	// with RuntimeContainerd the address of the host's default-route
	// interface, which pods reach from their network namespaces, see
	// builtin/node/nodeip; else 127.0.0.1).
	NodeIP string
	// PodCIDR is the range the local node's pod IPs come from (default
	// 127.10.0.0/16, loopback; with RuntimeContainerd 10.42.0.0/24, see
	// node.DefaultCNIPodCIDR). Control planes on one machine need distinct ones.
	PodCIDR string
	// SimulatedNodes runs that many simulated nodes (no containers) in-process.
	SimulatedNodes int
	// Operators are operator plugins (.so) to load; every *.so in OperatorDir is
	// loaded too.
	Operators []string
	// OperatorDir holds operator plugins (default DataDir/operators).
	OperatorDir string
	// Progress is told when each start-up step finished and how long it took.
	Progress func(step string, took time.Duration)
	// Tracing sends spans of API requests and reconciles to an OTLP
	// collector (off when its Endpoint is empty).
	Tracing tracing.Config
}

func (o *Options) complete() error {
	var errs []error
	if o.DataDir == "" && len(o.EtcdServers) == 0 {
		errs = append(errs, errors.New("controlplane: DataDir is required (or EtcdServers)"))
	}
	if o.BindAddress == "" {
		o.BindAddress = "127.0.0.1"
	}
	if o.Port < 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("controlplane: port %d out of range", o.Port))
	}
	if o.ServiceCIDR == "" && o.NodeRuntime == RuntimeContainerd {
		o.ServiceCIDR = DefaultContainerdServiceCIDR
	}
	if o.CompactionInterval == 0 {
		o.CompactionInterval = 5 * time.Minute
	}
	if o.Progress == nil {
		o.Progress = func(string, time.Duration) {}
	}
	return errors.Join(errs...)
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	opts     Options
	log      logr.Logger
	tracer   *otlp.Provider
	registry *registry.Registry
	server   *apiserver.Server
	httpSrv  *http.Server
	listener net.Listener
	url      string

	pki      *pki.PKI
	security *security.Security
	// aggregator proxies aggregated group versions (aggregator.go);
	// frontProxyCA signs its client certificate (nil without a PKI dir);
	// served memoizes servesLocally (*servedGroups).
	aggregator   *aggregator.Aggregator
	frontProxyCA *pki.PKI
	served       atomic.Value
	// apiServicesKick wakes the APIService loop (kickAPIServices).
	apiServicesKick chan struct{}
	flowControl     *flowcontrol.Controller
	manager         *manager.Manager
	scheduler       *manager.Manager // the scheduler's manager (nil without Scheduler)
	controllers     []string
	operators       []loader.Report
	dashboard       *dashboard.Dashboard

	etcd   *etcdstore.Embedded
	client *clientv3.Client
	store  storage.Interface

	cancel    context.CancelFunc
	errCh     chan error
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Start brings the control plane up and returns once the API server answers.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cp := &ControlPlane{opts: opts, log: opts.Logger, cancel: cancel, errCh: make(chan error, 4), apiServicesKick: make(chan struct{}, 1)}
	if err := cp.start(ctx, runCtx); err != nil {
		_ = cp.Close()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx, runCtx context.Context) error {
	opts := cp.opts
	t0 := time.Now()
	tp, err := otlp.New(logr.NewContext(ctx, cp.log), opts.Tracing, "converge")
	if err != nil {
		return err
	}
	cp.tracer = tp
	if len(opts.EtcdServers) > 0 {
		c, err := etcdstore.Connect(ctx, etcdstore.ExternalOptions{
			Endpoints: opts.EtcdServers, CAFile: opts.EtcdCAFile, CertFile: opts.EtcdCertFile, KeyFile: opts.EtcdKeyFile,
		})
		if err != nil {
			return fmt.Errorf("connect to etcd: %w", err)
		}
		cp.client = c
	} else {
		dir := filepath.Join(opts.DataDir, "etcd")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create data dir: %w", err)
		}
		e, err := etcdstore.StartEmbedded(ctx, etcdstore.EmbeddedOptions{Dir: dir, NoFsync: opts.NoFsync})
		if err != nil {
			return fmt.Errorf("start embedded etcd: %w", err)
		}
		cp.etcd = e
		cp.client = e.Client()
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			select {
			case err, ok := <-e.Err():
				if ok && err != nil {
					cp.errCh <- fmt.Errorf("embedded etcd: %w", err)
				}
			case <-runCtx.Done():
			}
		}()
	}
	base := etcdstore.New(cp.client)
	if cp.etcd != nil {
		base = etcdstore.NewLocal(cp.etcd) // same process: no gRPC between the API server and etcd
	}
	store, err := cp.encryptedStore(base)
	if err != nil {
		return err
	}
	cp.store = store
	opts.Progress("store", time.Since(t0))

	t1 := time.Now()
	cp.dashboard = cp.newDashboard()
	secOpts, err := cp.setupSecurity()
	if err != nil {
		return err
	}
	attachMetrics := cp.serveMetricsAPI(&secOpts)
	if err := cp.setupAggregator(&secOpts); err != nil {
		return err
	}
	alloc, err := servicenet.New(cp.store, servicenet.Options{
		ServiceCIDR: opts.ServiceCIDR, NodePortRange: opts.NodePortRange, Logger: cp.log.WithName("servicenet"),
	})
	if err != nil {
		return err
	}
	resources, err := cp.servedResources(alloc)
	if err != nil {
		return err
	}
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		_ = servicenet.NewRepairer(alloc, opts.ServiceRepairInterval).Start(runCtx)
	}()
	cp.registry = registry.New()
	for _, r := range resources {
		cp.registry.Add(r)
	}
	srv, err := apiserver.New(apiserver.Options{
		Storage: cp.store, Registry: cp.registry, Logger: cp.log.WithName("apiserver"),
		KubernetesVersion: opts.KubernetesVersion, BookmarkInterval: opts.BookmarkInterval,
		Security: secOpts, TracerProvider: cp.tracerProvider(), Collectors: cp.flowControlMetrics(),
		OpenAPIDefinitions: builtinopenapi.Definitions, RemoteVersions: cp.aggregator.RemoteVersions,
	})
	if err != nil {
		return err
	}
	srv.Start(runCtx)
	cp.server = srv
	attachMetrics(srv)
	if cp.security != nil {
		cp.security.Attach(srv)
	}
	cp.startCRDs(runCtx)
	apiServicesSynced, err := cp.startAPIServices(filters.WithUser(runCtx, rbac.BootstrapUser))
	if err != nil {
		return err
	}
	if err := cp.bootstrap(filters.WithUser(ctx, rbac.BootstrapUser)); err != nil {
		return err
	}
	// Ready as kube-apiserver is after its post-start hooks: the local
	// APIServices exist (/readyz's autoregister-completion) before Start
	// returns, so a client that checks readiness right away finds it.
	select {
	case <-apiServicesSynced:
	case <-time.After(apiServicesStartWait):
		cp.log.Info("The APIServices' first pass has not finished; /readyz reports it until it has", "waited", apiServicesStartWait)
	case <-ctx.Done():
		return ctx.Err()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.BindAddress, strconv.Itoa(opts.Port)))
	if err != nil {
		return fmt.Errorf("listen on %s:%d: %w", opts.BindAddress, opts.Port, err)
	}
	scheme, serving := "http", apiserver.ServingOptions{Logger: cp.log.WithName("http"), GoHTTP2: opts.GoHTTP2}
	if cp.pki != nil {
		scheme, serving.TLS = "https", cp.serverTLSConfig()
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			cp.pki.RunRotation(runCtx, time.Hour, func(err error) { cp.log.Error(err, "Certificate rotation failed") })
		}()
	}
	cp.listener = ln
	host := opts.BindAddress
	if host == "0.0.0.0" || host == "::" || host == "" {
		host = "127.0.0.1"
	}
	cp.url = scheme + "://" + net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	cp.httpSrv = apiserver.NewHTTPServer(runCtx, cp.dashboard.Wrap(srv.Handler()), serving)
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		if err := apiserver.Serve(cp.httpSrv, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cp.errCh <- fmt.Errorf("serve API: %w", err)
		}
	}()
	if err := cp.startAPIEndpoints(ctx, runCtx, alloc.APIServerServiceIP()); err != nil {
		return err
	}
	if err := cp.startFlowControl(runCtx); err != nil {
		return err
	}
	if err := cp.startDefaultServiceCIDR(runCtx, alloc.ServiceCIDR()); err != nil {
		return err
	}
	if opts.CompactionInterval > 0 {
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			if err := etcdstore.RunCompactor(runCtx, cp.client, opts.CompactionInterval, cp.log.WithName("compactor")); err != nil && runCtx.Err() == nil {
				cp.log.Error(err, "Compactor stopped")
			}
		}()
	}
	opts.Progress("apiserver", time.Since(t1))
	if err := cp.startComponents(runCtx); err != nil {
		return err
	}
	return cp.startNodes(runCtx)
}

// bootstrap creates the namespaces, priority classes, the default
// StorageClass, the kube-system/kube-dns
// Service of the cluster DNS (builtin/clusterdns) and (when secure) the default
// RBAC roles every cluster has.
func (cp *ControlPlane) bootstrap(ctx context.Context) error {
	h := cp.server.Handler()
	create := func(path, what string, obj any) error {
		err := cp.loopback(ctx, http.MethodPost, path, obj, nil)
		if le, ok := err.(loopbackError); ok && le.code == http.StatusConflict {
			return nil // there from an earlier start
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", what, err)
		}
		return nil
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		obj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
		if err := create("/api/v1/namespaces", "namespace "+ns, obj); err != nil {
			return err
		}
	}
	for _, pc := range schedulingv1.SystemPriorityClasses() {
		if err := create("/apis/scheduling.k8s.io/v1/priorityclasses", "priority class "+pc.Name, pc); err != nil {
			return err
		}
	}
	// The default StorageClass, created once: a class deleted or no longer
	// the default is not recreated or changed while another class exists.
	if err := cp.bootstrapDefaultStorageClass(ctx, create); err != nil {
		return err
	}
	if ip, err := servicenet.ClusterDNSIP(cp.opts.ServiceCIDR); err != nil {
		cp.log.Info("No cluster DNS Service: the service CIDR has no room for it", "error", err.Error())
	} else if err := create("/api/v1/namespaces/kube-system/services", "service kube-system/kube-dns", clusterdns.ServiceObject(ip)); err != nil {
		// Not fatal: on a store from before the cluster DNS another Service
		// may hold the address.
		cp.log.Error(err, "No cluster DNS Service", "clusterIP", ip.String())
	}
	if err := cp.bootstrapExtensionAuth(ctx); err != nil {
		return err
	}
	if cp.security != nil {
		return cp.security.Bootstrap(ctx, h)
	}
	return nil
}

// URL is the API server's base URL.
func (cp *ControlPlane) URL() string { return cp.url }

// Registry is the set of served resources.
func (cp *ControlPlane) Registry() *registry.Registry { return cp.registry }

// Handler is the API server's HTTP handler (for in-process use).
func (cp *ControlPlane) Handler() http.Handler { return cp.server.Handler() }

// Storage is the storage the API server uses.
func (cp *ControlPlane) Storage() storage.Interface { return cp.store }

// EtcdClient is the control plane's gRPC client of etcd (compaction, snapshots).
func (cp *ControlPlane) EtcdClient() *clientv3.Client { return cp.client }

// EtcdLocalClient is the in-process client of the embedded etcd that the
// storage uses, or nil when etcd is an external cluster.
func (cp *ControlPlane) EtcdLocalClient() *clientv3.Client {
	if cp.etcd == nil {
		return nil
	}
	return cp.etcd.LocalClient()
}

// Manager is the controller manager, or nil when no controllers run.
func (cp *ControlPlane) Manager() *manager.Manager { return cp.manager }

// ControllerManagerMetricsAddr is the address of the controller manager's
// /metrics once it listens ("" before, or when not served).
func (cp *ControlPlane) ControllerManagerMetricsAddr() string {
	if cp.manager == nil {
		return ""
	}
	return cp.manager.MetricsAddr()
}

// SchedulerMetricsAddr is the address of the scheduler's /metrics once it
// listens ("" before, or when not served).
func (cp *ControlPlane) SchedulerMetricsAddr() string {
	if cp.scheduler == nil {
		return ""
	}
	return cp.scheduler.MetricsAddr()
}

// Controllers are the names of the controllers the controller manager runs.
func (cp *ControlPlane) Controllers() []string { return cp.controllers }

// Err reports fatal errors of background parts.
func (cp *ControlPlane) Err() <-chan error { return cp.errCh }

// Close stops the API server, then storage. It is idempotent.
func (cp *ControlPlane) Close() error {
	cp.closeOnce.Do(func() {
		cp.cancel()
		var errs []error
		defer func() {
			if cp.security != nil {
				_ = cp.security.Close()
			}
		}()
		if cp.httpSrv != nil && cp.opts.ShutdownGrace < 0 {
			_ = cp.httpSrv.Close()
		} else if cp.httpSrv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), cmp.Or(cp.opts.ShutdownGrace, 3*time.Second))
			if err := cp.httpSrv.Shutdown(sctx); err != nil {
				_ = cp.httpSrv.Close()
			}
			cancel()
		}
		if cp.etcd != nil {
			if err := cp.etcd.Close(); err != nil {
				errs = append(errs, err)
			}
		} else if cp.client != nil {
			if err := cp.client.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		cp.wg.Wait()
		if cp.tracer != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if err := cp.tracer.Shutdown(sctx); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		cp.closeErr = errors.Join(errs...)
	})
	return cp.closeErr
}

// WriteKubeconfig writes a kubeconfig for this control plane to path (with the
// CA and the admin client certificate when secure).
func (cp *ControlPlane) WriteKubeconfig(path string) error {
	if cp.pki != nil {
		return cp.pki.WriteAdminKubeconfig(path, cp.url, "converge")
	}
	return WriteKubeconfig(path, cp.url, "converge")
}

// ClientConfig is a client configuration with full rights on this control plane.
func (cp *ControlPlane) ClientConfig(user string) (*client.Config, error) {
	cfg := &client.Config{Host: cp.url, UserAgent: user}
	if cp.pki != nil {
		cert, key, err := cp.pki.IssueClientCert(user, []string{filters.GroupMasters}, 0)
		if err != nil {
			return nil, fmt.Errorf("issue client certificate for %s: %w", user, err)
		}
		cfg.TLS = rest.TLSConfig{CAData: cp.pki.CAPEM(), CertData: cert, KeyData: key}
	}
	return cfg, nil
}

// WriteKubeconfig writes a kubeconfig pointing at server, with one context named name.
func WriteKubeconfig(path, server, name string) error {
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
users:
- name: %[1]s-admin
  user: {}
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s-admin
    namespace: default
current-context: %[1]s
preferences: {}
`, name, server)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// tracerProvider is what the API server and the managers trace with: nil
// when tracing is off, so they skip it entirely.
func (cp *ControlPlane) tracerProvider() trace.TracerProvider {
	if !cp.opts.Tracing.Enabled() {
		return nil
	}
	return cp.tracer
}

// bootstrapDefaultStorageClass creates the default StorageClass
// (volumebinder.DefaultClass, as k3s ships local-path) when the cluster has
// no StorageClass at all: a class the user deleted, or another class made
// the default, is left as the user made it.
func (cp *ControlPlane) bootstrapDefaultStorageClass(ctx context.Context, create func(path, what string, obj any) error) error {
	const path = "/apis/storage.k8s.io/v1/storageclasses"
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := cp.loopback(ctx, http.MethodGet, path+"?limit=1", nil, &list); err != nil {
		return fmt.Errorf("list storage classes: %w", err)
	}
	if len(list.Items) > 0 {
		return nil
	}
	sc := volumebinder.DefaultClass()
	return create(path, "storage class "+sc.Name, sc)
}
