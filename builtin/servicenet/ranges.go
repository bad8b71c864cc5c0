package servicenet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ipRange is an IPv4 CIDR whose addresses, except the network and broadcast
// addresses, may be handed out.
type ipRange struct {
	prefix netip.Prefix
	first  uint32 // first usable address
	size   int    // number of usable addresses
}

func parseIPRange(cidr string) (ipRange, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ipRange{}, fmt.Errorf("service CIDR %q: %w", cidr, err)
	}
	if !p.Addr().Is4() {
		return ipRange{}, fmt.Errorf("service CIDR %q: only IPv4 is supported", cidr)
	}
	if p.Bits() > 30 {
		return ipRange{}, fmt.Errorf("service CIDR %q: too small (at most /30)", cidr)
	}
	p = p.Masked()
	base := binary.BigEndian.Uint32(p.Addr().AsSlice())
	return ipRange{prefix: p, first: base + 1, size: 1<<(32-p.Bits()) - 2}, nil
}

// String renders the CIDR ("127.96.0.0/12").
func (r ipRange) String() string { return r.prefix.String() }

// offset returns the index of a usable address, or false.
func (r ipRange) offset(a netip.Addr) (int, bool) {
	if !a.Is4() || !r.prefix.Contains(a) {
		return 0, false
	}
	n := binary.BigEndian.Uint32(a.AsSlice())
	if n < r.first || n >= r.first+uint32(r.size) {
		return 0, false
	}
	return int(n - r.first), true
}

// at returns the usable address with index i.
func (r ipRange) at(i int) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], r.first+uint32(i))
	return netip.AddrFrom4(b)
}

// portRange is an inclusive range of ports.
type portRange struct {
	first, last int
}

// parsePortRange parses "30000-32767" (or a single port).
func parsePortRange(s string) (portRange, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		hi = lo
	}
	first, err1 := strconv.Atoi(strings.TrimSpace(lo))
	last, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return portRange{}, fmt.Errorf("node port range %q: want FIRST-LAST", s)
	}
	if first < 1 || last > 65535 || first > last {
		return portRange{}, fmt.Errorf("node port range %q: want 1 <= FIRST <= LAST <= 65535", s)
	}
	return portRange{first: first, last: last}, nil
}

// String renders the range as Kubernetes does ("30000-32767").
func (r portRange) String() string { return fmt.Sprintf("%d-%d", r.first, r.last) }

func (r portRange) size() int { return r.last - r.first + 1 }

func (r portRange) contains(p int) bool { return p >= r.first && p <= r.last }
