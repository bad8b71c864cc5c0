package podnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// vethPrefix starts the host side of the veth pairs the agent creates
// itself (the bridge plugin's are "veth" and 8 random hex digits).
const vethPrefix = "veth"

// hostVeth is the host-side name of a pod's veth pair: vethPrefix and 11 hex
// digits of the FNV-1a hash of the pod UID (15 bytes, the kernel's limit),
// so a teardown finds it without a record.
func hostVeth(uid string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return fmt.Sprintf(vethPrefix+"%011x", h.Sum64()>>20)
}

// bridgeLink finds or creates the node's bridge with the gateway address,
// up, as the bridge plugin with isGateway leaves it; the link found is
// remembered until forget.
type bridgeLink struct {
	name string
	gw   netip.Prefix // the gateway with the pod CIDR's length

	mu    sync.Mutex
	index int // guarded by mu; 0: not looked up yet
}

// ensure returns the bridge's interface index.
func (b *bridgeLink) ensure() (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.index != 0 {
		return b.index, nil
	}
	link, err := findBridge(b.name)
	if err != nil {
		return 0, err
	}
	if link == nil {
		la := netlink.NewLinkAttrs()
		la.Name = b.name
		if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: la}); err != nil && !errors.Is(err, unix.EEXIST) {
			return 0, fmt.Errorf("create bridge %s: %w", b.name, err)
		}
		if link, err = netlink.LinkByName(b.name); err != nil {
			return 0, fmt.Errorf("find bridge %s: %w", b.name, err)
		}
	}
	if _, ok := link.(*netlink.Bridge); !ok {
		return 0, fmt.Errorf("%s is a %s, not a bridge", b.name, link.Type())
	}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return 0, fmt.Errorf("list addresses of bridge %s: %w", b.name, err)
	}
	has := false
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok && ip == b.gw.Addr() {
			has = true
		} else {
			// What the bridge plugin refuses too (see reconcileBridge).
			return 0, fmt.Errorf("bridge %s already has an IP address different from %s: %s", b.name, b.gw, a.IPNet)
		}
	}
	if !has {
		if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: ipNet(b.gw)}); err != nil && !errors.Is(err, unix.EEXIST) {
			return 0, fmt.Errorf("give bridge %s the gateway address %s: %w", b.name, b.gw, err)
		}
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return 0, fmt.Errorf("bring bridge %s up: %w", b.name, err)
	}
	b.index = link.Attrs().Index
	return b.index, nil
}

// forget drops the remembered bridge (found gone).
func (b *bridgeLink) forget() {
	b.mu.Lock()
	b.index = 0
	b.mu.Unlock()
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// attachVeth connects the namespace at nsPath to the bridge: a veth pair
// whose host side (veth) is a hairpin port of the bridge and whose other
// side is eth0 in the namespace with ip (the pod CIDR's length) and a
// default route through the gateway — what the bridge plugin does for a
// pod, without its process (and host-local's).
func attachVeth(br *bridgeLink, nsPath, veth string, ip netip.Prefix) error {
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", nsPath, err)
	}
	defer ns.Close()
	var link *netlink.Veth
	for attempt := 0; ; attempt++ {
		idx, err := br.ensure()
		if err != nil {
			return err
		}
		la := netlink.NewLinkAttrs()
		la.Name, la.MasterIndex, la.Flags = veth, idx, net.FlagUp
		link = &netlink.Veth{LinkAttrs: la, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(ns))}
		err = netlink.LinkAdd(link)
		if err == nil {
			break
		}
		// LinkAdd attaches the pair after creating it: a failure may leave it.
		_ = removeVeth(veth)
		if attempt == 0 && (errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EINVAL)) {
			br.forget() // the bridge went (deleted by hand): create it again
			continue
		}
		return fmt.Errorf("create veth pair %s: %w", veth, err)
	}
	if err := netlink.LinkSetHairpin(link, true); err != nil {
		return fmt.Errorf("set hairpin mode on %s: %w", veth, err)
	}
	gw := br.gw.Addr().AsSlice()
	var eth0 netlink.Link
	arp := -1 // a packet socket in the namespace, for announce
	err = onOwnThread(func() error {
		// In the pod's namespace, netlink's package functions open their
		// sockets there.
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("enter network namespace %s: %w", nsPath, err)
		}
		var err error
		if eth0, err = netlink.LinkByName("eth0"); err != nil {
			return fmt.Errorf("find eth0 in %s: %w", nsPath, err)
		}
		if err := netlink.LinkSetUp(eth0); err != nil {
			return fmt.Errorf("bring eth0 up: %w", err)
		}
		if err := netlink.AddrAdd(eth0, &netlink.Addr{IPNet: ipNet(ip)}); err != nil {
			return fmt.Errorf("give eth0 the address %s: %w", ip, err)
		}
		if err := netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: gw, Scope: netlink.SCOPE_UNIVERSE}); err != nil {
			return fmt.Errorf("add the default route through %s: %w", br.gw.Addr(), err)
		}
		arp, _ = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return nil
	})
	if err != nil || arp < 0 {
		return err
	}
	defer unix.Close(arp)
	// Best effort, as the bridge plugin's: once the bridge port forwards
	// (the kernel enables it when it sees the pair's carrier, soon after
	// eth0 is up), else the bridge drops it.
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if l, err := netlink.LinkByName(veth); err != nil || l.Attrs().OperState == netlink.OperUp {
			break
		}
	}
	_ = announce(arp, eth0, ip.Addr())
	return nil
}

// announce broadcasts a gratuitous ARP request for ip from link through
// the packet socket fd (of link's namespace), as the bridge plugin does: the
// host and pods that knew the IP from an earlier pod learn its new MAC.
func announce(fd int, link netlink.Link, ip netip.Addr) error {
	mac := link.Attrs().HardwareAddr
	if len(mac) != 6 || !ip.Is4() {
		return errors.New("not an Ethernet interface with an IPv4 address")
	}
	a := ip.As4()
	pkt := make([]byte, 28)
	binary.BigEndian.PutUint16(pkt[0:], 1) // hardware: Ethernet
	binary.BigEndian.PutUint16(pkt[2:], unix.ETH_P_IP)
	pkt[4], pkt[5] = 6, 4
	binary.BigEndian.PutUint16(pkt[6:], 1) // a request
	copy(pkt[8:14], mac)
	copy(pkt[14:18], a[:])
	copy(pkt[24:28], a[:]) // the target is the sender: gratuitous
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ARP), Ifindex: link.Attrs().Index, Halen: 6,
		Addr: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	if err := unix.Sendto(fd, pkt, 0, sa); err != nil {
		return fmt.Errorf("send gratuitous ARP: %w", err)
	}
	return nil
}

// htons is v in network byte order, as the packet socket wants the protocol.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// removeVeth deletes a pod's host-side veth (and so its pair); a missing one
// is no error.
func removeVeth(veth string) error {
	link, err := netlink.LinkByName(veth)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find veth %s: %w", veth, err)
	}
	if err := netlink.LinkDel(link); err != nil && !errors.Is(err, unix.ENODEV) && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete veth %s: %w", veth, err)
	}
	return nil
}
