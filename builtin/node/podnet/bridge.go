package podnet

import (
	"errors"
	"fmt"
	"net/netip"
	"os"

	"github.com/go-logr/logr"
	"github.com/vishvananda/netlink"
)

// reconcileBridge prepares nodeName's bridge for the gateway gw: a bridge
// left by an earlier node of that name with another IPv4 address (another
// pod CIDR) would fail every CNI ADD ("already has an IP address different
// from"). When no interface is attached to it (no pod uses it) it is
// deleted, and the bridge plugin creates it again with gw; one still in use
// is left alone and reported. A bridge that does not exist, or has gw, is
// fine.
func reconcileBridge(nodeName string, gw netip.Addr, log logr.Logger) error {
	name := BridgeName(nodeName)
	link, err := findBridge(name)
	if link == nil {
		return err
	}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list addresses of bridge %s: %w", name, err)
	}
	var stale []string
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok && ip == gw {
			return nil
		}
		stale = append(stale, a.IPNet.String())
	}
	if len(stale) == 0 {
		return nil
	}
	ports, err := bridgePorts(link)
	if err != nil {
		return err
	}
	if len(ports) > 0 {
		return fmt.Errorf("bridge %s has address %v, not the gateway %s of this pod CIDR, and interfaces %v still use it: stop the pods of the earlier node named %q (or give this node another name)",
			name, stale, gw, ports, nodeName)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("remove stale bridge %s (address %v): %w", name, stale, err)
	}
	log.Info("Removed a pod bridge of an earlier node of this name with another address; pods will recreate it", "bridge", name, "addresses", stale, "gateway", gw)
	return nil
}

// findBridge returns the interface name, or nil (and no error) when there is
// none.
func findBridge(name string) (netlink.Link, error) {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find bridge %s: %w", name, err)
	}
	return link, nil
}

// bridgePorts lists the names of the interfaces attached to the bridge.
func bridgePorts(br netlink.Link) ([]string, error) {
	ls, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	var out []string
	for _, l := range ls {
		if l.Attrs().MasterIndex == br.Attrs().Index {
			out = append(out, l.Attrs().Name)
		}
	}
	return out, nil
}

// RemoveBridge deletes nodeName's bridge when no interface is attached to it,
// for a node that goes for good (an agent that stops keeps it for its
// restart). A missing bridge is not an error; one still in use is.
func RemoveBridge(nodeName string) error {
	name := BridgeName(nodeName)
	link, err := findBridge(name)
	if link == nil {
		return err
	}
	ports, err := bridgePorts(link)
	if err != nil {
		return err
	}
	if len(ports) > 0 {
		return fmt.Errorf("bridge %s is still used by %v", name, ports)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("remove bridge %s: %w", name, err)
	}
	return nil
}

// bridgeNetfilter is the sysctl that passes bridged IPv4 traffic through
// iptables (present once the br_netfilter module is loaded).
const bridgeNetfilter = "/proc/sys/net/bridge/bridge-nf-call-iptables"

// enableBridgeNetfilter turns bridgeNetfilter on where the module is loaded:
// a pod reaching another pod of its bridge through a hostPort (DNAT on the
// node's address) gets the answer bridged straight back, which must be
// un-NATed by iptables. Without the module it reports so, for a log line.
func enableBridgeNetfilter() error {
	b, err := os.ReadFile(bridgeNetfilter)
	if err != nil {
		return fmt.Errorf("br_netfilter is not loaded (modprobe br_netfilter): pods reaching a hostPort of a pod on the same bridge get no answer: %w", err)
	}
	if len(b) > 0 && b[0] == '1' {
		return nil
	}
	if err := os.WriteFile(bridgeNetfilter, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("enable bridged traffic through iptables: %w", err)
	}
	return nil
}
