package apiendpoints

import (
	"net"
	"net/netip"
)

// AdvertiseAddress is the endpoint address of an API server listening on
// bind: bind itself when it is a specific IP; for an unspecified one
// ("", 0.0.0.0, ::) the address this machine reaches other hosts from (the
// interface of the default route, as Kubernetes chooses), or 127.0.0.1 when
// it has no route.
func AdvertiseAddress(bind string) netip.Addr {
	if a, err := netip.ParseAddr(bind); err == nil && !a.IsUnspecified() {
		return a.Unmap()
	}
	loopback := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	// A UDP "connection" only picks the route: no packet is sent.
	conn, err := net.Dial("udp4", "192.0.2.1:9")
	if err != nil {
		return loopback
	}
	defer conn.Close()
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		if a, ok := netip.AddrFromSlice(ua.IP); ok && !a.IsUnspecified() {
			return a.Unmap()
		}
	}
	return loopback
}
