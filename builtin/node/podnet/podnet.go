package podnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	gocni "github.com/containerd/go-cni"
	"github.com/go-logr/logr"
)

// DefaultBinDirs are where CNI plugins are looked for when Options.BinDirs is
// empty: Debian's containernetworking-plugins, then the upstream layout.
var DefaultBinDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}

// ErrPluginMissing is wrapped by Setup's error when a CNI plugin binary is in
// none of the plugin directories.
var ErrPluginMissing = errors.New("podnet: CNI plugin missing")

// Options configure New. NodeName, RootDir and PodCIDR are required.
type Options struct {
	// NodeName names the bridge and the CNI network.
	NodeName string
	// RootDir is the node's root dir: the conflist goes to RootDir/cni/net.d
	// (unless ConfDir is set), host-local's allocations to RootDir/cni/ipam,
	// namespaces to RootDir/netns and setup records to RootDir/podnet.
	RootDir string
	// ConfDir overrides the conflist directory.
	ConfDir string
	// PodCIDR is the IPv4 range pod IPs come from (e.g. 10.42.0.0/24).
	PodCIDR string
	// BinDirs are searched for plugin binaries (default DefaultBinDirs).
	BinDirs []string
	// Logger receives setup and teardown logs.
	Logger logr.Logger
}

// Pod is what Setup needs to know about a pod.
type Pod struct {
	UID, Namespace, Name string
	// Ports are the hostPort mappings (portmap).
	Ports []PortMapping
}

// PortMapping forwards HostIP:HostPort on the node to the pod's ContainerPort.
type PortMapping struct {
	HostPort      int32  `json:"hostPort"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"` // "tcp" or "udp"
	HostIP        string `json:"hostIP,omitempty"`
}

// Sandbox is a pod's network: its IP and its namespace.
type Sandbox struct {
	IP        string        `json:"ip"`
	NetNSPath string        `json:"netns"`
	Ports     []PortMapping `json:"ports,omitempty"`
	// Veth is the host side of the pod's veth pair when the agent set the
	// network up itself (no CNI plugin ran; see Network.inProcess).
	Veth string `json:"veth,omitempty"`
}

// Network sets up pod network namespaces of one node. Create it with New.
type Network struct {
	opts Options
	log  logr.Logger
	// cni sets up pods with hostPorts (portmap chained), cniNoPorts the
	// others: one plugin less to run per pod.
	cni, cniNoPorts gocni.CNI
	podCIDR         string
	locks           podLocks
	// firewall is whether the chains hold the firewall plugin.
	firewall bool
	// addrs and bridge set up pods without hostPorts in-process (inProcess).
	addrs  *addrStore
	bridge *bridgeLink
	// cniMu runs one plugin chain that changes iptables at a time: the
	// plugins' iptables calls share the xtables lock, whose waiters retry in
	// one-second steps, so parallel chains were slower (50 pods: p99 5.7 s
	// against 4.0 s). Chains of bridge and host-local only (no hostPort, no
	// firewall; masquerade is one node-wide rule) run in parallel.
	cniMu sync.Mutex
}

// New writes the node's conflist, enables IPv4 forwarding and loads the
// configuration. Missing plugins are reported by Setup, not here, so an
// agent starts and says on each pod what to install.
func New(opts Options) (*Network, error) {
	var errs []error
	if opts.NodeName == "" {
		errs = append(errs, errors.New("podnet: NodeName is required"))
	}
	if opts.RootDir == "" {
		errs = append(errs, errors.New("podnet: RootDir is required"))
	}
	if len(opts.BinDirs) == 0 {
		opts.BinDirs = DefaultBinDirs
	}
	if opts.ConfDir == "" {
		opts.ConfDir = filepath.Join(opts.RootDir, "cni", "net.d")
	}
	// The firewall plugin only where the FORWARD chain drops by default.
	firewall := forwardDrops()
	ipam := filepath.Join(opts.RootDir, "cni", "ipam")
	conf, err := confList(opts.NodeName, opts.PodCIDR, ipam, chain{portmap: true, firewall: firewall})
	if err != nil {
		errs = append(errs, fmt.Errorf("podnet: %w", err))
	}
	confNoPorts, _ := confList(opts.NodeName, opts.PodCIDR, ipam, chain{firewall: firewall})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.ConfDir, 0o755); err != nil {
		return nil, fmt.Errorf("podnet: create CNI conf dir: %w", err)
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return nil, fmt.Errorf("podnet: enable IPv4 forwarding: %w", err)
	}
	if err := ensureMasquerade(opts.NodeName, opts.PodCIDR); err != nil {
		return nil, fmt.Errorf("podnet: %w", err)
	}
	if err := enableBridgeNetfilter(); err != nil {
		opts.Logger.Error(err, "Bridged pod traffic does not pass iptables")
	}
	prefix, gw, gwErr := Gateway(opts.PodCIDR)
	if gwErr == nil {
		if err := reconcileBridge(opts.NodeName, gw, opts.Logger); err != nil {
			// Pods fail with the bridge plugin's words; the agent keeps running.
			opts.Logger.Error(err, "The pod bridge cannot be used")
		}
	}
	load := func(name string, conf []byte) (gocni.CNI, error) {
		file := filepath.Join(opts.ConfDir, name)
		if err := os.WriteFile(file, conf, 0o644); err != nil {
			return nil, fmt.Errorf("podnet: write CNI configuration: %w", err)
		}
		c, err := gocni.New(gocni.WithPluginDir(opts.BinDirs), gocni.WithPluginConfDir(opts.ConfDir), gocni.WithMinNetworkCount(1))
		if err != nil {
			return nil, fmt.Errorf("podnet: %w", err)
		}
		// The network gets eth0; lo is brought up with the namespace
		// (createNetNS), not by the loopback plugin.
		if err := c.Load(gocni.WithConfListFile(file)); err != nil {
			return nil, fmt.Errorf("podnet: load CNI configuration %s: %w", file, err)
		}
		return c, nil
	}
	net := NetworkName(opts.NodeName)
	withPorts, err := load("10-"+net+".conflist", conf)
	if err != nil {
		return nil, err
	}
	noPorts, err := load("10-"+net+"-noports.conflist", confNoPorts)
	if err != nil {
		return nil, err
	}
	addrs, err := newAddrStore(ipam, net, opts.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("podnet: %w", err)
	}
	br := &bridgeLink{name: BridgeName(opts.NodeName), gw: netip.PrefixFrom(gw, prefix.Bits())}
	return &Network{opts: opts, log: opts.Logger, cni: withPorts, cniNoPorts: noPorts, podCIDR: opts.PodCIDR, firewall: firewall,
		addrs: addrs, bridge: br}, nil
}

// PodCIDR is the range pod IPs come from.
func (n *Network) PodCIDR() string { return n.podCIDR }

// Bridge is the node's bridge interface.
func (n *Network) Bridge() string { return BridgeName(n.opts.NodeName) }

// CheckPlugins returns an error wrapping ErrPluginMissing for the first plugin
// binary found in no plugin directory.
func (n *Network) CheckPlugins() error {
	for _, p := range Plugins {
		found := false
		for _, d := range n.opts.BinDirs {
			if st, err := os.Stat(filepath.Join(d, p)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%w: %q is in none of %s; install the CNI plugins (Debian/Ubuntu: apt-get install containernetworking-plugins) or point the node's CNI bin dir at them",
				ErrPluginMissing, p, strings.Join(n.opts.BinDirs, ", "))
		}
	}
	return nil
}

func (n *Network) nsPath(uid string) string { return filepath.Join(n.opts.RootDir, "netns", uid) }

// NetNSPath is where Setup creates the pod's network namespace: known
// before Setup returns, so a container's spec can name it while the network
// is set up.
func (n *Network) NetNSPath(uid string) string { return n.nsPath(uid) }

func (n *Network) recordPath(uid string) string {
	return filepath.Join(n.opts.RootDir, "podnet", uid+".json")
}

// Setup gives the pod its network namespace and IP (idempotent; see the
// package documentation).
func (n *Network) Setup(ctx context.Context, pod Pod) (Sandbox, error) {
	if pod.UID == "" || strings.ContainsAny(pod.UID, "/.") {
		return Sandbox{}, fmt.Errorf("set up pod network: bad pod UID %q", pod.UID)
	}
	defer n.locks.lock(pod.UID)()
	if sb, ok := n.record(pod.UID); ok && isNetNS(sb.NetNSPath) {
		return sb, nil
	}
	if err := n.CheckPlugins(); err != nil {
		return Sandbox{}, err
	}
	// Whatever an interrupted setup left goes first.
	if err := n.teardown(ctx, pod.UID); err != nil {
		return Sandbox{}, err
	}
	path := n.nsPath(pod.UID)
	if err := createNetNS(path); err != nil {
		return Sandbox{}, fmt.Errorf("set up pod network: %w", err)
	}
	sb := Sandbox{NetNSPath: path, Ports: pod.Ports}
	// Recorded before ADD when the pod maps ports, so that Teardown of an
	// interrupted setup runs DEL with portmap; one without ports is torn
	// down without a record as it is set up (one file write less a start).
	if len(sb.Ports) > 0 {
		if err := n.writeRecord(pod.UID, sb); err != nil {
			_ = removeNetNS(path)
			return Sandbox{}, err
		}
	}
	var err error
	if n.inProcess(sb) {
		err = n.attach(pod.UID, &sb)
	} else {
		err = n.cniAdd(ctx, pod.UID, &sb)
	}
	if err != nil {
		err = fmt.Errorf("set up pod network: %w", err)
		if terr := n.teardown(context.WithoutCancel(ctx), pod.UID); terr != nil {
			err = errors.Join(err, terr)
		}
		return Sandbox{}, err
	}
	if sb.IP == "" {
		_ = n.teardown(context.WithoutCancel(ctx), pod.UID)
		return Sandbox{}, errors.New("set up pod network: CNI returned no IPv4 address for eth0")
	}
	if err := n.writeRecord(pod.UID, sb); err != nil {
		_ = n.teardown(context.WithoutCancel(ctx), pod.UID)
		return Sandbox{}, err
	}
	n.log.V(1).Info("Pod network set up", "pod", pod.Namespace+"/"+pod.Name, "ip", sb.IP, "netns", path)
	return sb, nil
}

// Teardown removes the pod's network: CNI DEL (releasing its IP and port
// mappings), its namespace and record. Tearing down an unknown pod is a no-op.
func (n *Network) Teardown(ctx context.Context, uid string) error {
	defer n.locks.lock(uid)()
	return n.teardown(ctx, uid)
}

func (n *Network) teardown(ctx context.Context, uid string) error {
	path := n.nsPath(uid)
	sb, recorded := n.record(uid)
	_, statErr := os.Stat(path)
	if !recorded && statErr != nil {
		return nil // nothing was set up
	}
	sb.NetNSPath = path
	nsPath := path
	if !isNetNS(path) {
		nsPath = "" // plugins still release the IP and port mappings
	}
	if sb.Veth == "" { // set up by the plugins, or unknown (an interrupted setup)
		unlock := n.lockIptables(sb)
		err := n.cniFor(sb).Remove(ctx, uid, nsPath, n.nsOpts(sb)...)
		unlock()
		if err != nil {
			return fmt.Errorf("tear down pod network (CNI DEL): %w", err)
		}
	}
	if sb.Veth != "" || !recorded {
		if err := n.detach(uid); err != nil {
			return fmt.Errorf("tear down pod network: %w", err)
		}
	}
	if err := removeNetNS(path); err != nil {
		return fmt.Errorf("tear down pod network: %w", err)
	}
	if err := os.Remove(n.recordPath(uid)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tear down pod network: %w", err)
	}
	n.log.V(1).Info("Pod network torn down", "uid", uid)
	return nil
}

// Lookup returns the sandbox Setup recorded for the pod, if its namespace
// still exists.
func (n *Network) Lookup(uid string) (Sandbox, bool) {
	defer n.locks.lock(uid)()
	sb, ok := n.record(uid)
	return sb, ok && isNetNS(sb.NetNSPath)
}

// List returns the UIDs of the pods that have a namespace or a record.
func (n *Network) List() ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(uid string) {
		if !seen[uid] {
			seen[uid] = true
			out = append(out, uid)
		}
	}
	for _, dir := range []string{filepath.Join(n.opts.RootDir, "netns"), filepath.Join(n.opts.RootDir, "podnet")} {
		es, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("list pod networks: %w", err)
		}
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".tmp") {
				continue
			}
			add(strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	return out, nil
}

// inProcess reports whether the agent sets the pod's network up itself
// instead of running the CNI chain: for pods without hostPorts where the
// FORWARD chain accepts (no portmap, no firewall), the chain's bridge and
// host-local plugins would do what attach does — the same bridge, veth pair,
// address from the same host-local store, default route, hairpin port —
// at the cost of two plugin processes per pod (≈ 11 ms CPU of a start).
func (n *Network) inProcess(sb Sandbox) bool {
	return len(sb.Ports) == 0 && !n.firewall
}

// attach gives the pod's namespace its veth pair and an IP (inProcess).
func (n *Network) attach(uid string, sb *Sandbox) error {
	ip, err := n.addrs.allocate(uid, "eth0")
	if err != nil {
		return fmt.Errorf("allocate pod IP: %w", err)
	}
	veth := hostVeth(uid)
	if err := attachVeth(n.bridge, sb.NetNSPath, veth, netip.PrefixFrom(ip, n.bridge.gw.Bits())); err != nil {
		return err
	}
	sb.IP, sb.Veth = ip.String(), veth
	return nil
}

// cniAdd runs the CNI chain (ADD) for the pod's namespace and takes eth0's
// IPv4 address from its result.
func (n *Network) cniAdd(ctx context.Context, uid string, sb *Sandbox) error {
	unlock := n.lockIptables(*sb)
	res, err := n.cniFor(*sb).Setup(ctx, uid, sb.NetNSPath, n.nsOpts(*sb)...)
	unlock()
	if err != nil {
		return fmt.Errorf("CNI ADD: %w", err)
	}
	for _, ipc := range res.Interfaces["eth0"].IPConfigs {
		if ip4 := ipc.IP.To4(); ip4 != nil {
			sb.IP = ip4.String()
			break
		}
	}
	return nil
}

// detach undoes attach (what of it exists).
func (n *Network) detach(uid string) error {
	return errors.Join(removeVeth(hostVeth(uid)), n.addrs.release(uid, "eth0"))
}

// cniFor is the configuration a pod is set up and torn down with: the one
// with portmap when it maps host ports.
func (n *Network) cniFor(sb Sandbox) gocni.CNI {
	if len(sb.Ports) > 0 {
		return n.cni
	}
	return n.cniNoPorts
}

// lockIptables takes cniMu when the pod's chain changes iptables and returns
// its unlock.
func (n *Network) lockIptables(sb Sandbox) func() {
	if !(chain{portmap: len(sb.Ports) > 0, firewall: n.firewall}).iptables() {
		return func() {}
	}
	n.cniMu.Lock()
	return n.cniMu.Unlock
}

func (n *Network) nsOpts(sb Sandbox) []gocni.NamespaceOpts {
	pm := make([]gocni.PortMapping, 0, len(sb.Ports))
	for _, p := range sb.Ports {
		pm = append(pm, gocni.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: p.Protocol, HostIP: p.HostIP})
	}
	return []gocni.NamespaceOpts{gocni.WithCapabilityPortMap(pm)}
}

func (n *Network) record(uid string) (Sandbox, bool) {
	b, err := os.ReadFile(n.recordPath(uid))
	if err != nil {
		return Sandbox{}, false
	}
	var sb Sandbox
	if err := json.Unmarshal(b, &sb); err != nil || sb.IP == "" {
		return sb, false
	}
	return sb, true
}

func (n *Network) writeRecord(uid string, sb Sandbox) error {
	p := n.recordPath(uid)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("record pod network: %w", err)
	}
	b, _ := json.Marshal(sb)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("record pod network: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("record pod network: %w", err)
	}
	return nil
}

// podLocks serialises Setup and Teardown of each pod; different pods proceed
// in parallel (the plugins lock what pods share: host-local its allocations,
// bridge the bridge, iptables its tables).
type podLocks struct {
	mu   sync.Mutex
	held map[string]*podLock // guarded by mu
}

type podLock struct {
	sync.Mutex
	refs int // guarded by podLocks.mu
}

// lock locks uid and returns its unlock.
func (l *podLocks) lock(uid string) func() {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*podLock{}
	}
	pl := l.held[uid]
	if pl == nil {
		pl = &podLock{}
		l.held[uid] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.held, uid)
		}
		l.mu.Unlock()
	}
}

// forwardDrops reports whether the FORWARD chain's policy is DROP (or cannot
// be read, to be safe), when pods' traffic needs the firewall plugin's
// ACCEPT rules.
func forwardDrops() bool {
	out, err := exec.Command("iptables", "-S", "FORWARD").Output()
	if err != nil {
		return true
	}
	return !strings.Contains(string(out), "-P FORWARD ACCEPT")
}
