package podnet

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
)

// Plugins are the CNI plugin types the network needs.
var Plugins = []string{"bridge", "host-local", "portmap", "firewall"}

// BridgePrefix starts the name of every pod bridge.
const BridgePrefix = "cnv-"

// BridgeName is the Linux bridge of nodeName's pods: BridgePrefix and 8 hex
// digits of the FNV-1a hash of the name (interface names are limited to 15
// bytes).
func BridgeName(nodeName string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(nodeName))
	return fmt.Sprintf(BridgePrefix+"%08x", h.Sum32())
}

// NetworkName is the CNI network name of nodeName's pods.
func NetworkName(nodeName string) string {
	return "converge-" + BridgeName(nodeName)[len(BridgePrefix):]
}

// Gateway is the first host address of cidr (the bridge's address). cidr must
// be an IPv4 prefix of at most /30.
func Gateway(cidr string) (netip.Prefix, netip.Addr, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("pod CIDR %q: %w", cidr, err)
	}
	p = p.Masked()
	if !p.Addr().Is4() {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("pod CIDR %s: only IPv4 is supported", cidr)
	}
	if p.Bits() > 30 {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("pod CIDR %s is too small (at most /30)", cidr)
	}
	if p.Addr().IsLoopback() {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("pod CIDR %s is a loopback range: pods in their own network namespace need a routable one (e.g. 10.42.0.0/24)", cidr)
	}
	b := p.Addr().As4()
	gw := netip.AddrFrom4(b).Next()
	return p, gw, nil
}

// chain selects the optional plugins of a configuration list.
type chain struct {
	// portmap maps hostPorts (only pods that have some need it).
	portmap bool
	// firewall accepts pods' traffic in the FORWARD chain, needed where its
	// policy is DROP (Docker sets it so).
	firewall bool
}

// iptables reports whether the chain's plugins change iptables rules.
func (c chain) iptables() bool { return c.portmap || c.firewall }

// confList renders the network configuration list of a node. Every list of a
// node has the same name, bridge and IPAM directory: they differ only in the
// plugins chained after the bridge, so pods set up with either share one
// address space.
func confList(nodeName, podCIDR, ipamDir string, c chain) ([]byte, error) {
	p, gw, err := Gateway(podCIDR)
	if err != nil {
		return nil, err
	}
	type obj = map[string]any
	plugins := []obj{{
		"type":             "bridge",
		"bridge":           BridgeName(nodeName),
		"isGateway":        true,
		"isDefaultGateway": true,
		"ipMasq":           false, // one rule for the pod CIDR instead (ensureMasquerade)
		"hairpinMode":      true,
		"ipam": obj{
			"type":    "host-local",
			"ranges":  [][]obj{{{"subnet": p.String(), "gateway": gw.String()}}},
			"dataDir": ipamDir,
		},
	}}
	if c.portmap {
		plugins = append(plugins, obj{"type": "portmap", "capabilities": obj{"portMappings": true}, "snat": true})
	}
	if c.firewall {
		plugins = append(plugins, obj{"type": "firewall"})
	}
	conf := obj{"cniVersion": "1.0.0", "name": NetworkName(nodeName), "plugins": plugins}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render CNI configuration: %w", err)
	}
	return b, nil
}
