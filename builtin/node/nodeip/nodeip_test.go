package nodeip_test

import (
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/node/nodeip"
)

func TestChoose(t *testing.T) {
	a := netip.MustParseAddr
	lo := nodeip.Link{Index: 1, Name: "lo", Up: true, Loopback: true, Addrs: []netip.Addr{a("127.0.0.1")}}
	eth0 := nodeip.Link{Index: 2, Name: "eth0", Up: true, Addrs: []netip.Addr{a("169.254.3.3"), a("192.0.2.2"), a("192.0.2.9")}}
	wlan := nodeip.Link{Index: 3, Name: "wlan0", Up: true, Addrs: []netip.Addr{a("10.1.2.3")}}
	down := nodeip.Link{Index: 4, Name: "eth1", Addrs: []netip.Addr{a("10.9.9.9")}}
	bridge := nodeip.Link{Index: 5, Name: "cnv-0a1b2c3d", Up: true, Addrs: []netip.Addr{a("10.42.0.1")}}
	svc := nodeip.Link{Index: 6, Name: "converge0", Up: true, Addrs: []netip.Addr{a("10.43.0.1")}}
	links := []nodeip.Link{lo, bridge, svc, eth0, wlan, down}
	tests := []struct {
		name   string
		routes []nodeip.Route
		links  []nodeip.Link
		want   string
	}{
		{"the default route's interface, its first global address", []nodeip.Route{{Default: true, Link: 2}}, links, "192.0.2.2"},
		{"the default route's preferred source", []nodeip.Route{{Default: true, Link: 2, Src: a("192.0.2.9")}}, links, "192.0.2.9"},
		{"the default route of the lowest metric", []nodeip.Route{{Default: true, Link: 2, Priority: 600}, {Default: true, Link: 3, Priority: 100}}, links, "10.1.2.3"},
		{"not a route to a subnet", []nodeip.Route{{Link: 3}, {Default: true, Link: 2}}, links, "192.0.2.2"},
		{"no default route: the first global address of an up interface not Converge's", []nodeip.Route{{Link: 5}}, links, "192.0.2.2"},
		{"a default route through a down interface is skipped", []nodeip.Route{{Default: true, Link: 4}}, links, "192.0.2.2"},
		{"only Converge's and loopback interfaces", nil, []nodeip.Link{lo, bridge, svc, down}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nodeip.Choose(tt.routes, tt.links)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Choose = %s, want an error", got)
				}
				return
			}
			if err != nil || got.String() != tt.want {
				t.Fatalf("Choose = %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestDetect compares Detect with the source address iproute2 picks for the
// default route on this machine.
func TestDetect(t *testing.T) {
	out, err := exec.Command("ip", "-4", "route", "show", "default").Output()
	if err != nil {
		t.Fatalf("ip route (iproute2 is required): %v", err)
	}
	got, err := nodeip.Detect()
	if strings.TrimSpace(string(out)) == "" {
		if err == nil && !got.IsGlobalUnicast() {
			t.Fatalf("Detect = %s without a default route: want a global address or an error", got)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	for i, w := range f {
		if w == "dev" && i+1 < len(f) {
			dev, err := exec.Command("ip", "-4", "-o", "addr", "show", "dev", f[i+1], "scope", "global").Output()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(dev), " "+got.String()+"/") {
				t.Fatalf("Detect = %s, not an address of the default route's interface %s:\n%s", got, f[i+1], dev)
			}
			return
		}
	}
	t.Fatalf("no dev in %q", out)
}
