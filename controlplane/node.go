package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/clusterdns"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/cri/process"
	"github.com/converge-dev/converge/builtin/node/fleet"
	"github.com/converge-dev/converge/builtin/node/nodeip"
	"github.com/converge-dev/converge/builtin/node/proxy"
	securitynode "github.com/converge-dev/converge/builtin/security/node"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/client"
)

// Container runtimes a node can run pods with.
const (
	// RuntimeProcess runs containers as host processes (the default).
	RuntimeProcess = "process"
	// RuntimeContainerd runs containers through containerd.
	RuntimeContainerd = "containerd"
)

// DefaultContainerdServiceCIDR is the Service CIDR of a control plane whose
// local node runs containerd: k3s' 10.43.0.0/16, routable from pods in their
// own network namespaces (the service proxy puts each cluster IP on its
// dummy interface, see builtin/node/proxy).
const DefaultContainerdServiceCIDR = "10.43.0.0/16"

// NodeOptions configure NewNode.
type NodeOptions struct {
	// Agent configures the node agent (name, client configuration, root dir,
	// pod CIDR, addresses, log server TLS, lease and back-off timings). Its
	// Runtime is chosen by Runtime below.
	Agent node.Options
	// Runtime is RuntimeProcess (default) or RuntimeContainerd.
	Runtime string
	// ContainerdAddress is the containerd socket of RuntimeContainerd; empty
	// starts and supervises a private containerd under Agent.RootDir.
	ContainerdAddress string
	// RegistriesFile configures image pulls of RuntimeContainerd (k3s
	// registries.yaml shape: mirrors, logins, TLS); empty reaches registries
	// directly (loopback ones over plain HTTP).
	RegistriesFile string
	// ServiceProxy, when set, also runs the service proxy (Service cluster
	// IPs and node ports to ready endpoints) with this client configuration.
	// One per machine: the cluster IPs it listens on are the machine's.
	ServiceProxy *client.Config
	// DNSServer, when set, also runs the cluster DNS server
	// (builtin/clusterdns) with this client configuration, answering on the
	// kube-system/kube-dns Service's cluster IP. One per machine, like the
	// proxy. Its domain is Agent.ClusterDomain.
	DNSServer *client.Config
}

// Node is a node agent with its container runtime and, optionally, the
// service proxy and the cluster DNS server. Both `converge up` (its local
// node) and `converge node` build theirs with NewNode.
type Node struct {
	agent   *node.Agent
	proxy   *proxy.Proxy
	dns     *clusterdns.Server
	runtime io.Closer
	daemon  *daemon.Daemon
	// stopDaemon stops the private containerd: only after the agent stopped
	// its containers (a daemon stopping with ctx would race the agent's
	// shutdown and leave containers running).
	stopDaemon context.CancelFunc
	log        logr.Logger
}

// NewNode creates the node's runtime (starting a private containerd bound to
// ctx when RuntimeContainerd has no address), agent, service proxy and DNS
// server. Start runs them.
func NewNode(ctx context.Context, o NodeOptions) (_ *Node, err error) {
	n := &Node{log: o.Agent.Logger}
	defer func() {
		if err != nil {
			n.close()
		}
	}()
	if o.Agent.RootDir != "" {
		if err := os.MkdirAll(o.Agent.RootDir, 0o700); err != nil {
			return nil, fmt.Errorf("create node dir: %w", err)
		}
	}
	switch o.Runtime {
	case "", RuntimeProcess:
		o.Agent.Runtime = process.New(process.Options{Logger: n.log.WithName("process-runtime"),
			StateDir: filepath.Join(o.Agent.RootDir, "containers")})
	case RuntimeContainerd:
		rt, err := n.containerd(ctx, o)
		if err != nil {
			return nil, err
		}
		o.Agent.Runtime = rt
	default:
		return nil, fmt.Errorf("unknown container runtime %q: use %s or %s", o.Runtime, RuntimeProcess, RuntimeContainerd)
	}
	if n.agent, err = node.New(o.Agent); err != nil {
		return nil, fmt.Errorf("create node agent: %w", err)
	}
	if o.ServiceProxy == nil && o.DNSServer == nil {
		return n, nil
	}
	sch, err := all.NewScheme()
	if err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	if o.ServiceProxy != nil {
		pc, err := client.New(o.ServiceProxy, client.Options{Scheme: sch})
		if err != nil {
			return nil, fmt.Errorf("create service proxy client: %w", err)
		}
		if n.proxy, err = proxy.New(proxy.Options{Client: pc, Logger: n.log.WithName("proxy")}); err != nil {
			return nil, fmt.Errorf("create service proxy: %w", err)
		}
	}
	if o.DNSServer != nil {
		dc, err := client.New(o.DNSServer, client.Options{Scheme: sch})
		if err != nil {
			return nil, fmt.Errorf("create cluster DNS client: %w", err)
		}
		n.dns, err = clusterdns.New(clusterdns.Options{Client: dc, Domain: o.Agent.ClusterDomain, Logger: n.log.WithName("dns")})
		if err != nil {
			return nil, fmt.Errorf("create cluster DNS server: %w", err)
		}
	}
	return n, nil
}

// containerd connects to containerd, first starting a private daemon under
// the node's root dir when no address is given.
func (n *Node) containerd(ctx context.Context, o NodeOptions) (cri.Runtime, error) {
	var regs containerd.Registries
	if o.RegistriesFile != "" {
		var err error
		if regs, err = containerd.LoadRegistries(o.RegistriesFile); err != nil {
			return nil, err
		}
	}
	addr := o.ContainerdAddress
	if addr == "" {
		dctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		d, err := daemon.Start(dctx, daemon.Options{Dir: filepath.Join(o.Agent.RootDir, "containerd")})
		if err != nil {
			stop()
			return nil, fmt.Errorf("start containerd: %w", err)
		}
		n.stopDaemon = stop
		n.daemon, addr = d, d.Address()
	}
	rt, err := containerd.New(ctx, containerd.Options{Address: addr, Registries: regs})
	if err != nil {
		return nil, err
	}
	n.runtime = rt
	return rt, nil
}

// Start runs the agent (and the service proxy and DNS server) until ctx
// ends, then closes the runtime's connection and stops the private
// containerd, once the agent has stopped its containers. A failing service
// proxy or DNS server is logged, not fatal: the node's pods still run.
func (n *Node) Start(ctx context.Context) error {
	defer n.close()
	var wg sync.WaitGroup
	if n.proxy != nil {
		wg.Go(func() {
			if err := n.proxy.Start(ctx); err != nil && ctx.Err() == nil {
				n.log.Error(err, "Service proxy stopped")
			}
		})
	}
	if n.dns != nil {
		wg.Go(func() {
			if err := n.dns.Start(ctx); err != nil && ctx.Err() == nil {
				n.log.Error(err, "Cluster DNS server stopped")
			}
		})
	}
	if n.daemon != nil {
		wg.Go(func() {
			select {
			case <-n.daemon.Done():
				if ctx.Err() == nil {
					n.log.Error(n.daemon.Wait(), "The node's containerd exited: containers cannot start or stop until converge restarts", "address", n.daemon.Address())
				}
			case <-ctx.Done():
			}
		})
	}
	err := n.agent.Start(ctx)
	wg.Wait()
	return err
}

// close closes the runtime's connection, then stops the private containerd
// (after the agent stopped its containers). Idempotent.
func (n *Node) close() {
	if n.runtime != nil {
		_ = n.runtime.Close()
		n.runtime = nil
	}
	if n.stopDaemon != nil {
		n.stopDaemon()
		<-n.daemon.Done()
		n.stopDaemon = nil
	}
}

// startNodes runs the local node agent (with the service proxy) and the
// simulated nodes, each a client of this control plane's API server like a
// remote agent would be.
func (cp *ControlPlane) startNodes(ctx context.Context) error {
	opts := cp.opts
	if opts.LocalNode {
		t0 := time.Now()
		name := cp.nodeName()
		cfg, err := cp.componentConfig(securitynode.UserPrefix+name, securitynode.Group)
		if err != nil {
			return err
		}
		proxyCfg, err := cp.componentConfig(rbac.ProxyUser)
		if err != nil {
			return err
		}
		// A containerd node's pods reach the node at the host's address, where
		// its agent then listens too; an insecure control plane's agent serves
		// logs and exec without authentication, so it stays on loopback there
		// unless told otherwise (--node-ip).
		nodeIP, err := nodeip.ForNode(opts.NodeIP, opts.NodeRuntime == RuntimeContainerd && cp.pki != nil)
		if nodeIP == "" {
			return err
		}
		if err != nil {
			cp.log.Error(err, "Cannot find the host's address for the local node")
		}
		logTLS, err := cp.nodeLogTLS(nodeIP, nodeip.Loopback, "localhost")
		if err != nil {
			return err
		}
		var clusterDNS []string
		if ip, err := servicenet.ClusterDNSIP(opts.ServiceCIDR); err == nil {
			clusterDNS = []string{ip.String()}
		}
		n, err := NewNode(ctx, NodeOptions{
			Agent: node.Options{NodeName: name, Config: cfg, RootDir: filepath.Join(opts.DataDir, "node"), InternalIP: nodeIP,
				Logger: cp.log.WithName("node"), PodCIDR: opts.PodCIDR, CNIBinDirs: opts.CNIBinDirs, LogTLS: logTLS, ClusterDNS: clusterDNS},
			Runtime: opts.NodeRuntime, ContainerdAddress: opts.ContainerdAddress, RegistriesFile: opts.RegistriesFile, ServiceProxy: proxyCfg, DNSServer: proxyCfg,
		})
		if err != nil {
			return err
		}
		cp.run(ctx, "node agent", n.Start)
		opts.Progress("node", time.Since(t0))
	}
	if opts.SimulatedNodes > 0 {
		t0 := time.Now()
		cfg, err := cp.ClientConfig("system:node:simulated")
		if err != nil {
			return err
		}
		fleet, err := fleet.New(fleet.Options{Config: cfg, Nodes: opts.SimulatedNodes, Logger: cp.log.WithName("simulated")})
		if err != nil {
			return fmt.Errorf("create simulated nodes: %w", err)
		}
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			if err := fleet.Start(ctx); err != nil && ctx.Err() == nil {
				cp.log.Error(err, "Simulated nodes stopped")
			}
		}()
		opts.Progress("sim-nodes", time.Since(t0))
	}
	return nil
}

// run runs start in the background until ctx ends; a failure is fatal to the
// control plane (reported on Err).
func (cp *ControlPlane) run(ctx context.Context, what string, start func(context.Context) error) {
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		if err := start(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			cp.errCh <- fmt.Errorf("%s: %w", what, err)
		}
	}()
}

func (cp *ControlPlane) nodeName() string {
	if cp.opts.NodeName != "" {
		return cp.opts.NodeName
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "converge-node"
}
