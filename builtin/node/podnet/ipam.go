package podnet

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// addrStore allocates pod IPs in the host-local IPAM plugin's on-disk
// format, so pods the agent sets up itself and pods set up through the CNI
// chain (host-local, for hostPorts) share one address space: in
// <dataDir>/<network>, a file per allocated IP named by the IP and holding
// "<container ID>\r\n<interface>", last_reserved_ip.0 with the last IP
// handed out (allocation goes round-robin from it), and the file lock, whose
// flock serialises both.
type addrStore struct {
	dir string
	// first and last bound the range (the CIDR's second address to the one
	// before its broadcast address, host-local's defaults); gw is skipped.
	first, last, gw netip.Addr
}

// newAddrStore is the store of network over podCIDR under dataDir.
func newAddrStore(dataDir, network, podCIDR string) (*addrStore, error) {
	p, gw, err := Gateway(podCIDR)
	if err != nil {
		return nil, err
	}
	b := p.Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	bcast := n | (1<<(32-p.Bits()) - 1)
	return &addrStore{dir: filepath.Join(dataDir, network), first: p.Addr().Next(), last: addr4(bcast - 1), gw: gw}, nil
}

func addr4(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// lastFile is host-local's record of the last IP of range set 0.
const lastFile = "last_reserved_ip.0"

// lock takes the store's file lock and returns its release.
func (s *addrStore) lock() (func(), error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create IPAM directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open IPAM lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock IPAM directory: %w", err)
	}
	return func() { _ = f.Close() }, nil // closing releases the flock
}

// allocate reserves the next free IP for id's interface ifname.
func (s *addrStore) allocate(id, ifname string) (netip.Addr, error) {
	unlock, err := s.lock()
	if err != nil {
		return netip.Addr{}, err
	}
	defer unlock()
	start := s.first
	if b, err := os.ReadFile(filepath.Join(s.dir, lastFile)); err == nil {
		if ip, err := netip.ParseAddr(strings.TrimSpace(string(b))); err == nil && s.inRange(ip) {
			start = s.next(ip)
		}
	}
	content := []byte(strings.TrimSpace(id) + "\r\n" + ifname)
	for ip := start; ; {
		if ip != s.gw {
			f, err := os.OpenFile(filepath.Join(s.dir, ip.String()), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			if err == nil {
				_, werr := f.Write(content)
				if cerr := f.Close(); werr == nil {
					werr = cerr
				}
				if werr != nil {
					_ = os.Remove(f.Name())
					return netip.Addr{}, fmt.Errorf("reserve IP %s: %w", ip, werr)
				}
				if err := os.WriteFile(filepath.Join(s.dir, lastFile), []byte(ip.String()), 0o644); err != nil {
					return netip.Addr{}, fmt.Errorf("record the last reserved IP: %w", err)
				}
				return ip, nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return netip.Addr{}, fmt.Errorf("reserve IP %s: %w", ip, err)
			}
		}
		if ip = s.next(ip); ip == start {
			return netip.Addr{}, fmt.Errorf("no IP address left in %s", s.dir)
		}
	}
}

// release frees the IPs held by id's interface ifname (none is no error).
func (s *addrStore) release(id, ifname string) error {
	es, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release IP of %s: %w", id, err)
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	want := strings.TrimSpace(id) + "\r\n" + ifname
	for _, e := range es {
		if _, err := netip.ParseAddr(e.Name()); err != nil {
			continue
		}
		p := filepath.Join(s.dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue // released meanwhile
		}
		if got := strings.TrimSpace(string(b)); got == want || got == strings.TrimSpace(id) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("release IP %s of %s: %w", e.Name(), id, err)
			}
		}
	}
	return nil
}

func (s *addrStore) inRange(ip netip.Addr) bool {
	return ip.Is4() && s.first.Compare(ip) <= 0 && ip.Compare(s.last) <= 0
}

// next is the IP after ip in the range, wrapping around.
func (s *addrStore) next(ip netip.Addr) netip.Addr {
	if ip.Compare(s.last) >= 0 {
		return s.first
	}
	return ip.Next()
}
