package apiendpoints

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChoose(t *testing.T) {
	t.Parallel()
	ap := netip.MustParseAddrPort
	a := netip.MustParseAddr
	tests := []struct {
		name string
		live []netip.AddrPort
		want endpoints
	}{
		{"one", []netip.AddrPort{ap("127.0.0.1:6443")}, endpoints{6443, []netip.Addr{a("127.0.0.1")}}},
		{"one port, sorted", []netip.AddrPort{ap("10.0.0.3:6443"), ap("10.0.0.1:6443"), ap("10.0.0.2:6443")},
			endpoints{6443, []netip.Addr{a("10.0.0.1"), a("10.0.0.2"), a("10.0.0.3")}}},
		{"the port most serve on", []netip.AddrPort{ap("10.0.0.1:6444"), ap("10.0.0.2:6443"), ap("10.0.0.3:6444")},
			endpoints{6444, []netip.Addr{a("10.0.0.1"), a("10.0.0.3")}}},
		{"the lowest on a tie: replicas on one address", []netip.AddrPort{ap("127.0.0.1:6444"), ap("127.0.0.1:6443")},
			endpoints{6443, []netip.Addr{a("127.0.0.1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := choose(tt.live)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(endpoints{}), cmp.Comparer(func(x, y netip.Addr) bool { return x == y })); diff != "" {
				t.Errorf("choose (-want +got):\n%s", diff)
			}
		})
	}
}
