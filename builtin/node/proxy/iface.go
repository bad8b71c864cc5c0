package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"github.com/vishvananda/netlink"
)

// DefaultInterface is the dummy interface the proxy puts cluster IPs on.
const DefaultInterface = "converge0"

// syncInterface makes the /32 addresses this proxy holds on the interface
// name exactly want, creating the interface when an address is wanted (a
// dummy, or a bridge without ports where the kernel has no dummy driver).
// owned is the set of addresses this proxy holds there (updated in place):
// only those are removed when no longer wanted, so proxies of other control
// planes on the machine (other Service CIDRs) can share the interface.
func syncInterface(name string, want []netip.Addr, owned map[netip.Addr]bool) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		clear(owned) // the interface went, and the addresses with it
		if len(want) == 0 {
			return nil
		}
		attrs := netlink.LinkAttrs{Name: name}
		if err := netlink.LinkAdd(&netlink.Dummy{LinkAttrs: attrs}); err != nil {
			// Kernels without the dummy driver: a bridge without ports holds
			// local addresses just as well.
			if err2 := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err2 != nil {
				// Another proxy may have created it meanwhile.
				if _, lerr := netlink.LinkByName(name); lerr != nil {
					return fmt.Errorf("create interface %s for cluster IPs: %w", name, errors.Join(err, err2))
				}
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
		switch {
		case !ok:
		case wanted[a]:
			delete(wanted, a)
			owned[a] = true
		case owned[a]:
			if err := netlink.AddrDel(link, &h); err != nil {
				errs = append(errs, fmt.Errorf("remove %s from %s: %w", h.IPNet, name, err))
				continue
			}
			delete(owned, a)
		}
	}
	for a := range owned {
		if !slices.Contains(want, a) {
			delete(owned, a) // removed by someone else
		}
	}
	for _, a := range want {
		if !wanted[a] {
			continue
		}
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(32, 32)}}
		if err := netlink.AddrAdd(link, addr); err != nil {
			errs = append(errs, fmt.Errorf("add %s to %s: %w", a, name, err))
			continue
		}
		owned[a] = true
	}
	return errors.Join(errs...)
}

// releaseInterface removes the addresses this proxy holds on the interface
// (owned), then the interface itself once no address is left on it: another
// control plane's proxy may still use it.
func releaseInterface(name string, owned map[netip.Addr]bool) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find interface %s: %w", name, err)
	}
	var errs []error
	for a := range owned {
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(32, 32)}}
		if err := netlink.AddrDel(link, addr); err != nil && !errors.Is(err, syscall.EADDRNOTAVAIL) {
			errs = append(errs, fmt.Errorf("remove %s from %s: %w", a, name, err))
		}
	}
	have, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list addresses of %s: %w", name, err))...)
	}
	if len(have) == 0 {
		if err := netlink.LinkDel(link); err != nil {
			errs = append(errs, fmt.Errorf("remove interface %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
