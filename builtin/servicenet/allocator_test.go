package servicenet

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIPRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cidr        string
		wantErr     bool
		first, last string
		size        int
	}{
		{cidr: "127.96.0.0/12", first: "127.96.0.1", last: "127.111.255.254", size: 1<<20 - 2},
		{cidr: "10.0.0.0/30", first: "10.0.0.1", last: "10.0.0.2", size: 2},
		{cidr: "10.0.0.77/24", first: "10.0.0.1", last: "10.0.0.254", size: 254},
		{cidr: "10.0.0.0/31", wantErr: true},
		{cidr: "fd00::/64", wantErr: true},
		{cidr: "127.96.0.0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.cidr, func(t *testing.T) {
			t.Parallel()
			r, err := parseIPRange(tt.cidr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if r.size != tt.size || r.at(0).String() != tt.first || r.at(r.size-1).String() != tt.last {
				t.Errorf("size %d first %s last %s; want %d %s %s", r.size, r.at(0), r.at(r.size-1), tt.size, tt.first, tt.last)
			}
			for i, want := range map[string]bool{tt.first: true, tt.last: true} {
				if off, ok := r.offset(netip.MustParseAddr(i)); ok != want || r.at(off).String() != i {
					t.Errorf("offset(%s) = %d, %v", i, off, ok)
				}
			}
			network := r.prefix.Addr()
			if _, ok := r.offset(network); ok {
				t.Errorf("network address %s is usable", network)
			}
			if _, ok := r.offset(r.at(r.size - 1).Next()); ok {
				t.Errorf("broadcast address is usable")
			}
			if _, ok := r.offset(netip.MustParseAddr("127.0.0.1")); ok && tt.cidr != "127.0.0.0/8" {
				t.Errorf("127.0.0.1 is in %s", tt.cidr)
			}
		})
	}
}

func TestParsePortRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    portRange
		wantErr bool
	}{
		{in: "30000-32767", want: portRange{30000, 32767}},
		{in: " 8080 ", want: portRange{8080, 8080}},
		{in: "32767-30000", wantErr: true},
		{in: "0-10", wantErr: true},
		{in: "1-70000", wantErr: true},
		{in: "a-b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := parsePortRange(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parsePortRange(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func newTestAllocator(t *testing.T, cidr, ports string) (*Allocator, *memStore) {
	t.Helper()
	ms := newMemStore()
	a, err := New(ms, Options{ServiceCIDR: cidr, NodePortRange: ports})
	if err != nil {
		t.Fatal(err)
	}
	return a, ms
}

func owner(n int) Owner {
	return Owner{Namespace: "default", Name: fmt.Sprintf("s%d", n), UID: fmt.Sprintf("uid-%d", n)}
}

func TestNewValidatesOptions(t *testing.T) {
	t.Parallel()
	if _, err := New(newMemStore(), Options{}); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	_, err := New(nil, Options{ServiceCIDR: "x", NodePortRange: "9-1"})
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"store is required", `service CIDR "x"`, `node port range "9-1"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestAllocateIPExhaustionAndRelease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, ms := newTestAllocator(t, "10.1.0.0/29", "")
	seen := map[netip.Addr]bool{}
	apiIP := a.APIServerServiceIP()
	if apiIP != netip.MustParseAddr("10.1.0.1") {
		t.Fatalf("API server service IP %s, want 10.1.0.1", apiIP)
	}
	for i := range 5 {
		ip, err := a.AllocateIP(ctx, owner(i))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip] || !a.ServiceCIDR().Contains(ip) || ip == netip.MustParseAddr("10.1.0.0") || ip == netip.MustParseAddr("10.1.0.7") || ip == apiIP {
			t.Fatalf("allocation %d: bad, duplicate or reserved IP %s", i, ip)
		}
		seen[ip] = true
	}
	// The first address is the kubernetes Service's: never handed out, but
	// reservable on request.
	if _, err := a.AllocateIP(ctx, owner(6)); !errors.Is(err, ErrFull) || err.Error() != "range is full" {
		t.Fatalf("6th allocation: %v, want ErrFull", err)
	}
	if err := a.ReserveIP(ctx, apiIP, owner(5)); err != nil {
		t.Fatalf("reserve %s on request: %v", apiIP, err)
	}
	// Releasing needs the owner: someone else's release is a no-op.
	victim := netip.MustParseAddr("10.1.0.3")
	var holder Owner
	for i := range 6 {
		if err := a.ReserveIP(ctx, victim, owner(i)); err == nil {
			holder = owner(i)
		}
	}
	if err := a.ReleaseIP(ctx, victim, owner(99)); err != nil {
		t.Fatal(err)
	}
	if got := len(ms.keys(IPReservationPrefix)); got != 6 {
		t.Fatalf("a stranger's release freed an IP: %d reservations", got)
	}
	if err := a.ReleaseIP(ctx, victim, holder); err != nil {
		t.Fatal(err)
	}
	ip, err := a.AllocateIP(ctx, owner(7))
	if err != nil || ip != victim {
		t.Fatalf("after release: %s, %v; want %s", ip, err, victim)
	}
}

func TestReserveIP(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, _ := newTestAllocator(t, "127.96.0.0/12", "")
	tests := []struct {
		name    string
		ip      string
		owner   Owner
		wantErr string
	}{
		{name: "free", ip: "127.96.0.10", owner: owner(1)},
		{name: "again by its owner", ip: "127.96.0.10", owner: owner(1)},
		{name: "taken", ip: "127.96.0.10", owner: owner(2), wantErr: "provided IP is already allocated"},
		{name: "outside", ip: "10.96.0.10", owner: owner(2),
			wantErr: "provided IP is not in the valid range. The range of valid IPs is 127.96.0.0/12"},
		{name: "network address", ip: "127.96.0.0", owner: owner(2),
			wantErr: "provided IP is not in the valid range. The range of valid IPs is 127.96.0.0/12"},
		{name: "pod range", ip: "127.10.0.5", owner: owner(2),
			wantErr: "provided IP is not in the valid range. The range of valid IPs is 127.96.0.0/12"},
	}
	for _, tt := range tests { // sequential: each step sees the previous ones
		err := a.ReserveIP(ctx, netip.MustParseAddr(tt.ip), tt.owner)
		if got := errString(err); got != tt.wantErr {
			t.Errorf("%s: error %q, want %q", tt.name, got, tt.wantErr)
		}
	}
	if err := a.ReserveIP(ctx, netip.MustParseAddr("127.0.0.1"), owner(3)); !errors.Is(err, ErrNotInRange) {
		t.Errorf("127.0.0.1: %v, want ErrNotInRange", err)
	}
}

func TestNodePorts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, _ := newTestAllocator(t, "", "30000-30002")
	got := map[int]bool{}
	for i := range 3 {
		p, err := a.AllocateNodePort(ctx, owner(i))
		if err != nil || p < 30000 || p > 30002 || got[p] {
			t.Fatalf("allocation %d: %d, %v", i, p, err)
		}
		got[p] = true
	}
	if _, err := a.AllocateNodePort(ctx, owner(3)); !errors.Is(err, ErrFull) {
		t.Fatalf("4th allocation: %v", err)
	}
	if err := a.ReserveNodePort(ctx, 30080, owner(3)); errString(err) != "provided port is not in the valid range. The range of valid ports is 30000-30002" {
		t.Fatalf("out of range: %v", err)
	}
	if err := a.ReserveNodePort(ctx, 30001, owner(3)); !errors.Is(err, ErrPortAllocated) || err.Error() != "provided port is already allocated" {
		t.Fatalf("taken: %v", err)
	}
}

// Concurrent allocations never hand out one IP twice: each reservation is a
// create-if-absent of its own key.
func TestConcurrentAllocationsAreDistinct(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, _ := newTestAllocator(t, "10.2.0.0/26", "")
	const n = 60 // 62 usable, the first and the tenth (cluster DNS) withheld
	ips := make([]netip.Addr, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ips[i], errs[i] = a.AllocateIP(ctx, owner(i)) })
	}
	wg.Wait()
	seen := map[netip.Addr]int{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("allocation %d: %v", i, errs[i])
		}
		if ips[i] == netip.MustParseAddr("10.2.0.1") || ips[i] == netip.MustParseAddr("10.2.0.10") {
			t.Fatalf("allocation %d: withheld IP %s handed out", i, ips[i])
		}
		if j, dup := seen[ips[i]]; dup {
			t.Fatalf("allocations %d and %d share %s", i, j, ips[i])
		}
		seen[ips[i]] = i
	}
	if _, err := a.AllocateIP(ctx, owner(n)); !errors.Is(err, ErrFull) {
		t.Fatalf("full range: %v", err)
	}
	if diff := cmp.Diff(n, len(seen)); diff != "" {
		t.Error(diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestClusterDNSIP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cidr, want, err string }{
		{"", "127.96.0.10", ""},
		{"10.96.0.0/12", "10.96.0.10", ""},
		{"10.0.0.16/28", "10.0.0.26", ""},
		{"10.0.0.0/29", "", "too small"},
		{"nope", "", "nope"},
	} {
		ip, err := ClusterDNSIP(tc.cidr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.cidr, err, tc.err)
			}
			continue
		}
		if err != nil || ip.String() != tc.want {
			t.Errorf("%q: %s, %v; want %s", tc.cidr, ip, err, tc.want)
		}
		if tc.cidr == "" {
			continue
		}
		a, _ := newTestAllocator(t, tc.cidr, "")
		if got, ok := a.ClusterDNSIP(); !ok || got != ip {
			t.Errorf("%q: Allocator.ClusterDNSIP %s %v, want %s", tc.cidr, got, ok, ip)
		}
	}
	a, _ := newTestAllocator(t, "10.0.0.0/29", "")
	if _, ok := a.ClusterDNSIP(); ok {
		t.Error("a /29 has no cluster DNS IP")
	}
}
