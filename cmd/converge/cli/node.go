package cli

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/nodeip"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

func newNodeCommand(g *globalOptions) *cobra.Command {
	var name, rootDir, runtimeName, podCIDR, internalIP, ctrdAddress, registries, clusterDomain string
	var cniBinDirs, clusterDNS []string
	var leaseDuration time.Duration
	var serviceProxy bool
	var join joinOptions
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run a node agent (the kubelet equivalent) against an API server",
		Example: `  converge node --kubeconfig ~/.converge/kubeconfig --name worker-1 --root-dir /var/lib/cv/node
  converge node --runtime containerd --containerd-address /run/containerd/containerd.sock

  # A second containerd node on the machine of converge up --runtime containerd
  converge node --runtime containerd --name worker-1 --root-dir /var/lib/cv/worker-1 --pod-cidr 10.42.1.0/24

  # Join a secure control plane with a bootstrap token (see converge token create)
  converge node --server https://10.0.0.1:6443 --token abcdef.0123456789abcdef --ca-cert-hash sha256:...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if name == "" {
				if name, err = os.Hostname(); err != nil {
					return fmt.Errorf("--name is required: %w", err)
				}
			}
			log := g.logger().WithName("node")
			var cfg *client.Config
			if join.token != "" || join.server != "" {
				if cfg, err = joinedConfig(cmd.Context(), join, name, rootDir, log); err != nil {
					return err
				}
			} else {
				env := kubeconfig.DefaultEnvironment()
				env.Getenv = g.getenv
				if cfg, _, err = env.Load(g.kubeconfig, g.context); err != nil {
					return fmt.Errorf("%w\npass --kubeconfig or set KUBECONFIG (or join with --server and --token)", err)
				}
			}
			ip, err := nodeip.ForNode(internalIP, runtimeName == controlplane.RuntimeContainerd)
			if ip == "" {
				return fmt.Errorf("--node-ip: %w", err)
			}
			if err != nil {
				log.Error(err, "Cannot find the host's address")
			}
			internalIP = ip
			logTLS, err := nodeLogTLS(cfg, internalIP)
			if err != nil {
				return err
			}
			if len(clusterDNS) == 0 && serviceProxy {
				ip, err := servicenet.ClusterDNSIP("")
				if err != nil {
					return err
				}
				clusterDNS = []string{ip.String()}
			}
			o := controlplane.NodeOptions{
				Agent: node.Options{NodeName: name, Config: cfg, RootDir: rootDir,
					PodCIDR: podCIDR, CNIBinDirs: cniBinDirs, InternalIP: internalIP, Logger: log, LogTLS: logTLS,
					LeaseDuration: leaseDuration, LeaseRenewInterval: leaseDuration / 4,
					ClusterDNS: clusterDNS, ClusterDomain: clusterDomain},
				Runtime: runtimeName, ContainerdAddress: ctrdAddress, RegistriesFile: registries,
			}
			if serviceProxy {
				o.ServiceProxy, o.DNSServer = cfg, cfg
			}
			n, err := controlplane.NewNode(cmd.Context(), o)
			if err != nil {
				return err
			}
			return n.Start(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "node name (default: the hostname)")
	f.DurationVar(&leaseDuration, "node-lease-duration", 40*time.Second,
		"duration of the node's heartbeat Lease, renewed every quarter of it (the controller-manager's --node-monitor-grace-period must exceed the renew interval)")
	f.StringVar(&rootDir, "root-dir", filepath.Join(defaultDataDir(), "node"), "directory for pod volumes and container logs")
	f.StringVar(&runtimeName, "runtime", "process", "container runtime: process or containerd")
	f.StringVar(&podCIDR, "pod-cidr", "", "range pod IPs come from when the Node has no spec.podCIDR (default 127.10.0.0/16, with --runtime containerd 10.42.0.0/24; give each node its own)")
	f.StringSliceVar(&cniBinDirs, "cni-bin-dir", nil, "directories of the CNI plugins for --runtime containerd (default /usr/lib/cni,/opt/cni/bin)")
	f.StringVar(&internalIP, "node-ip", "", "the node's InternalIP, given to hostNetwork pods and hostPorts (default with --runtime containerd: the address of the host's default-route interface, which pods reach; else 127.0.0.1)")
	f.StringVar(&internalIP, "internal-ip", "", "the node's address")
	_ = f.MarkDeprecated("internal-ip", "use --node-ip")
	f.BoolVar(&serviceProxy, "service-proxy", false, "also run the service proxy (Service cluster IPs and node ports to ready pods) and the cluster DNS server (on the kube-dns Service's cluster IP) with the node's credentials; one per machine")
	f.StringSliceVar(&clusterDNS, "cluster-dns", nil, "nameservers of pods with dnsPolicy ClusterFirst (default with --service-proxy: the kube-dns address of the default service CIDR, 127.96.0.10; without, such pods get the host's resolv.conf)")
	f.StringVar(&clusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain, in pods' search paths and served by the cluster DNS server")
	f.StringVar(&registries, "registries", "", "registries config for containerd image pulls (k3s registries.yaml shape: mirrors, logins, TLS; loopback registries need none)")
	f.StringVar(&ctrdAddress, "containerd-address", "", "containerd socket (default: start a private containerd under --root-dir)")
	f.StringVar(&join.server, "server", "", "join the API server at this https:// URL with --token (credentials are kept in <root-dir>/kubeconfig)")
	f.StringVar(&join.token, "token", "", "bootstrap token to join with (converge token create)")
	f.StringVar(&join.caHash, "ca-cert-hash", "", "sha256:HASH of the cluster CA's public key, to trust the server on first contact")
	f.StringVar(&join.caFile, "certificate-authority", "", "the cluster CA certificate file (instead of --ca-cert-hash)")
	return cmd
}

// nodeLogTLS is the log server configuration of a node agent: against a
// secure control plane (its kubeconfig has the cluster CA) HTTPS that requires
// the API server's client certificate; otherwise plain HTTP (nil).
func nodeLogTLS(cfg *client.Config, internalIP string) (*tls.Config, error) {
	ca := cfg.TLS.CAData
	if len(ca) == 0 && cfg.TLS.CAFile != "" {
		b, err := os.ReadFile(cfg.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the cluster CA: %w", err)
		}
		ca = b
	}
	if len(ca) == 0 {
		return nil, nil
	}
	return pki.NodeLogServerTLS(ca, []string{cmp.Or(internalIP, nodeip.Loopback), nodeip.Loopback, "localhost"})
}
