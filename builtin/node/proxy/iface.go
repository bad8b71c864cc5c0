package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// DefaultInterface is the dummy interface the proxy puts cluster IPs on.
const DefaultInterface = "converge0"

// syncInterface makes the /32 addresses of the dummy interface name exactly
// want, creating the interface when an address is wanted (a dummy, or a
// bridge without ports where the kernel has no dummy driver).
func syncInterface(name string, want []netip.Addr) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		if len(want) == 0 {
			return nil
		}
		attrs := netlink.LinkAttrs{Name: name}
		if err := netlink.LinkAdd(&netlink.Dummy{LinkAttrs: attrs}); err != nil {
			// Kernels without the dummy driver: a bridge without ports holds
			// local addresses just as well.
			if err2 := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err2 != nil {
				return fmt.Errorf("create interface %s for cluster IPs: %w", name, errors.Join(err, err2))
			}
		}
		link, err = netlink.LinkByName(name)
	}
	if err != nil {
		return fmt.Errorf("find interface %s: %w", name, err)
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("bring up interface %s: %w", name, err)
		}
	}
	have, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list addresses of %s: %w", name, err)
	}
	wanted := map[netip.Addr]bool{}
	for _, a := range want {
		wanted[a] = true
	}
	var errs []error
	for _, h := range have {
		a, ok := netip.AddrFromSlice(h.IP.To4())
		if ok && wanted[a] {
			delete(wanted, a)
			continue
		}
		if err := netlink.AddrDel(link, &h); err != nil {
			errs = append(errs, fmt.Errorf("remove %s from %s: %w", h.IPNet, name, err))
		}
	}
	for _, a := range want {
		if !wanted[a] {
			continue
		}
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(32, 32)}}
		if err := netlink.AddrAdd(link, addr); err != nil {
			errs = append(errs, fmt.Errorf("add %s to %s: %w", a, name, err))
		}
	}
	return errors.Join(errs...)
}

// removeInterface deletes the dummy interface (with its addresses).
func removeInterface(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find interface %s: %w", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("remove interface %s: %w", name, err)
	}
	return nil
}
