package nodeip

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/converge-dev/converge/builtin/node/podnet"
	"github.com/converge-dev/converge/builtin/node/proxy"
)

// Route is what Choose needs to know of one IPv4 route of the main table.
type Route struct {
	// Default is whether the route is a default route (0.0.0.0/0).
	Default bool
	// Link is the index of the route's output interface.
	Link int
	// Src is the route's preferred source address, if any.
	Src netip.Addr
	// Priority is the route's metric (lower wins).
	Priority int
}

// Link is what Choose needs to know of one interface.
type Link struct {
	Index    int
	Name     string
	Up       bool
	Loopback bool
	// Addrs are its IPv4 addresses, in the kernel's order.
	Addrs []netip.Addr
}

// ErrNoAddress is returned when the host has no usable IPv4 address.
var ErrNoAddress = errors.New("nodeip: no default route and no global IPv4 address on an up interface")

// Detect returns the address to advertise (see the package documentation),
// read from the kernel's routes and interfaces.
func Detect() (netip.Addr, error) {
	rs, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("nodeip: list routes: %w", err)
	}
	var routes []Route
	for _, r := range rs {
		src, _ := netip.AddrFromSlice(r.Src.To4())
		routes = append(routes, Route{Default: r.Dst == nil || (r.Dst.IP.IsUnspecified() && isZeroMask(r.Dst.Mask)),
			Link: r.LinkIndex, Src: src, Priority: r.Priority})
	}
	ls, err := netlink.LinkList()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("nodeip: list interfaces: %w", err)
	}
	var links []Link
	for _, l := range ls {
		a := l.Attrs()
		as, err := netlink.AddrList(l, netlink.FAMILY_V4)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("nodeip: list addresses of %s: %w", a.Name, err)
		}
		link := Link{Index: a.Index, Name: a.Name, Up: a.Flags&net.FlagUp != 0, Loopback: a.Flags&net.FlagLoopback != 0}
		for _, ad := range as {
			if ip, ok := netip.AddrFromSlice(ad.IP.To4()); ok {
				link.Addrs = append(link.Addrs, ip)
			}
		}
		links = append(links, link)
	}
	return Choose(routes, links)
}

func isZeroMask(m net.IPMask) bool {
	ones, _ := m.Size()
	return ones == 0
}

// Choose picks the address from routes and links (see the package
// documentation). It is a pure function.
func Choose(routes []Route, links []Link) (netip.Addr, error) {
	byIndex := map[int]Link{}
	for _, l := range links {
		byIndex[l.Index] = l
	}
	var best *Route
	for i, r := range routes {
		if !r.Default {
			continue
		}
		if l, ok := byIndex[r.Link]; !ok || !l.Up || ours(l.Name) {
			continue
		}
		if best == nil || r.Priority < best.Priority {
			best = &routes[i]
		}
	}
	if best != nil {
		if usable(best.Src) {
			return best.Src, nil
		}
		for _, a := range byIndex[best.Link].Addrs {
			if usable(a) {
				return a, nil
			}
		}
	}
	for _, l := range links {
		if !l.Up || l.Loopback || ours(l.Name) {
			continue
		}
		for _, a := range l.Addrs {
			if usable(a) {
				return a, nil
			}
		}
	}
	return netip.Addr{}, ErrNoAddress
}

// usable reports whether a is a global unicast IPv4 address (not loopback,
// link-local, multicast or unspecified).
func usable(a netip.Addr) bool {
	return a.IsValid() && a.Is4() && a.IsGlobalUnicast()
}

// ours reports whether the interface is one Converge creates: a pod bridge
// or the service proxy's interface.
func ours(name string) bool {
	return strings.HasPrefix(name, podnet.BridgePrefix) || name == proxy.DefaultInterface
}

// Loopback is the address of a node whose pods share the host's network
// namespace (the process runtime): they reach the host there.
const Loopback = "127.0.0.1"

// ForNode returns the address a node advertises: configured when set (it
// must be an IP); else, when its pods have their own network namespaces
// (ownNetNS: the containerd runtime with CNI), Detect's; else Loopback. When
// detection fails it returns Loopback with the error, for the caller to log.
func ForNode(configured string, ownNetNS bool) (string, error) {
	if configured != "" {
		if _, err := netip.ParseAddr(configured); err != nil {
			return "", fmt.Errorf("node IP %q is not an IP address", configured)
		}
		return configured, nil
	}
	if !ownNetNS {
		return Loopback, nil
	}
	a, err := Detect()
	if err != nil {
		return Loopback, fmt.Errorf("%w: the node advertises %s, which its pods cannot reach (set the node IP)", err, Loopback)
	}
	return a.String(), nil
}
