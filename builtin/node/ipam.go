package node

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
)

// ipam hands out pod IPs from one IPv4 CIDR, skipping the network address
// and the first host address.
type ipam struct {
	base  uint32
	size  uint32
	mu    sync.Mutex
	next  uint32            // guarded by mu
	inUse map[uint32]string // offset → pod UID; guarded by mu
}

func newIPAM(cidr string) (*ipam, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR: %w", err)
	}
	ip4 := n.IP.To4()
	if ip4 == nil {
		return nil, fmt.Errorf("pod CIDR %s: only IPv4 is supported", cidr)
	}
	ones, bits := n.Mask.Size()
	size := uint32(1) << uint(bits-ones)
	if size < 4 {
		return nil, fmt.Errorf("pod CIDR %s is too small", cidr)
	}
	return &ipam{base: binary.BigEndian.Uint32(ip4), size: size, next: 2, inUse: map[uint32]string{}}, nil
}

// allocate returns uid's IP, allocating one on first use.
func (p *ipam) allocate(uid string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for off, u := range p.inUse {
		if u == uid {
			return p.ip(off), nil
		}
	}
	for range p.size {
		off := p.next
		p.next++
		if p.next >= p.size-1 {
			p.next = 2
		}
		if off < 2 || off >= p.size-1 {
			continue
		}
		if _, used := p.inUse[off]; !used {
			p.inUse[off] = uid
			return p.ip(off), nil
		}
	}
	return "", fmt.Errorf("pod CIDR exhausted")
}

// reserve gives uid the address ip (a pod adopted after an agent restart keeps
// its IP); ip must be in the range and free or already uid's.
func (p *ipam) reserve(uid, ip string) error {
	v := net.ParseIP(ip).To4()
	if v == nil {
		return fmt.Errorf("reserve pod IP %q: not an IPv4 address", ip)
	}
	off := binary.BigEndian.Uint32(v) - p.base
	if binary.BigEndian.Uint32(v) < p.base || off < 2 || off >= p.size-1 {
		return fmt.Errorf("reserve pod IP %s: outside the pod CIDR", ip)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if u, used := p.inUse[off]; used && u != uid {
		return fmt.Errorf("reserve pod IP %s: in use by pod %s", ip, u)
	}
	p.inUse[off] = uid
	return nil
}

func (p *ipam) release(uid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for off, u := range p.inUse {
		if u == uid {
			delete(p.inUse, off)
		}
	}
}

func (p *ipam) ip(off uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], p.base+off)
	return net.IP(b[:]).String()
}
