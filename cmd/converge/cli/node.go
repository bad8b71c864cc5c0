package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/runtime"
	"github.com/converge-dev/converge/builtin/node/runtime/containerd"
	"github.com/converge-dev/converge/builtin/node/runtime/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/runtime/process"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

func newNodeCommand(g *globalOptions) *cobra.Command {
	var name, rootDir, runtimeName, podCIDR, internalIP, ctrdAddress string
	var leaseDuration time.Duration
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run a node agent (the kubelet equivalent) against an API server",
		Example: `  converge node --kubeconfig ~/.converge/kubeconfig --name worker-1 --root-dir /var/lib/cv/node
  converge node --runtime containerd --containerd-address /run/containerd/containerd.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env := kubeconfig.DefaultEnvironment()
			env.Getenv = g.getenv
			cfg, _, err := env.Load(g.kubeconfig, g.context)
			if err != nil {
				return fmt.Errorf("%w\npass --kubeconfig or set KUBECONFIG", err)
			}
			if name == "" {
				if name, err = os.Hostname(); err != nil {
					return fmt.Errorf("--name is required: %w", err)
				}
			}
			log := g.logger().WithName("node")
			var rt runtime.Runtime
			switch runtimeName {
			case "process":
				rt = process.New(process.Options{Logger: log.WithName("process-runtime"), StateDir: filepath.Join(rootDir, "containers")})
			case "containerd":
				addr := ctrdAddress
				if addr == "" {
					d, err := daemon.Start(cmd.Context(), daemon.Options{Dir: filepath.Join(rootDir, "containerd")})
					if err != nil {
						return err
					}
					addr = d.Address()
				}
				c, err := containerd.New(cmd.Context(), containerd.Options{Address: addr})
				if err != nil {
					return err
				}
				defer c.Close()
				rt = c
			default:
				return fmt.Errorf("unknown --runtime %q: use process or containerd", runtimeName)
			}
			agent, err := node.New(node.Options{NodeName: name, Config: cfg, Runtime: rt, RootDir: rootDir,
				PodCIDR: podCIDR, InternalIP: internalIP, Logger: log,
				LeaseDuration: leaseDuration, LeaseRenewInterval: leaseDuration / 4})
			if err != nil {
				return err
			}
			return agent.Start(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "node name (default: the hostname)")
	f.DurationVar(&leaseDuration, "node-lease-duration", 40*time.Second,
		"duration of the node's heartbeat Lease, renewed every quarter of it (the controller-manager's --node-monitor-grace-period must exceed the renew interval)")
	f.StringVar(&rootDir, "root-dir", filepath.Join(defaultDataDir(), "node"), "directory for pod volumes and container logs")
	f.StringVar(&runtimeName, "runtime", "process", "container runtime: process or containerd")
	f.StringVar(&podCIDR, "pod-cidr", "", "range pod IPs come from (default 127.10.0.0/16; give each node its own)")
	f.StringVar(&internalIP, "internal-ip", "", "the node's address (default 127.0.0.1)")
	f.StringVar(&ctrdAddress, "containerd-address", "", "containerd socket (default: start a private containerd under --root-dir)")
	return cmd
}
