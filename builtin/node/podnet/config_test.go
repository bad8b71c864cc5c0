package podnet

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGateway(t *testing.T) {
	for _, tc := range []struct {
		cidr, prefix, gw string
		err              bool
	}{
		{cidr: "10.42.0.0/24", prefix: "10.42.0.0/24", gw: "10.42.0.1"},
		{cidr: "10.42.1.7/24", prefix: "10.42.1.0/24", gw: "10.42.1.1"},
		{cidr: "10.42.0.0/16", prefix: "10.42.0.0/16", gw: "10.42.0.1"},
		{cidr: "192.168.9.0/30", prefix: "192.168.9.0/30", gw: "192.168.9.1"},
		{cidr: "10.0.0.0/31", err: true},
		{cidr: "127.10.0.0/16", err: true},
		{cidr: "fd00::/64", err: true},
		{cidr: "nonsense", err: true},
	} {
		p, gw, err := Gateway(tc.cidr)
		if tc.err {
			if err == nil {
				t.Errorf("Gateway(%q) = %s, %s; want an error", tc.cidr, p, gw)
			}
			continue
		}
		if err != nil || p.String() != tc.prefix || gw.String() != tc.gw {
			t.Errorf("Gateway(%q) = %s, %s, %v; want %s, %s", tc.cidr, p, gw, err, tc.prefix, tc.gw)
		}
	}
}

func TestBridgeName(t *testing.T) {
	a, b := BridgeName("node-a"), BridgeName("node-b")
	if a == b {
		t.Errorf("two nodes share bridge %s", a)
	}
	for _, n := range []string{a, b, BridgeName("a-very-long-node-name.with.dots.example.com")} {
		if len(n) > 15 {
			t.Errorf("bridge name %q is longer than 15 bytes", n)
		}
	}
	if BridgeName("node-a") != a {
		t.Error("bridge name is not stable")
	}
}

func TestConfList(t *testing.T) {
	for _, tc := range []struct {
		name, node, cidr   string
		wantSubnet, wantGW string
		err                bool
	}{
		{name: "first node", node: "n1", cidr: "10.42.0.0/24", wantSubnet: "10.42.0.0/24", wantGW: "10.42.0.1"},
		{name: "unmasked", node: "n2", cidr: "10.42.1.9/24", wantSubnet: "10.42.1.0/24", wantGW: "10.42.1.1"},
		{name: "loopback refused", node: "n3", cidr: "127.10.0.0/16", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := confList(tc.node, tc.cidr, "/data/ipam", chain{portmap: true, firewall: true})
			if tc.err {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				CNIVersion string `json:"cniVersion"`
				Name       string `json:"name"`
				Plugins    []struct {
					Type         string          `json:"type"`
					Bridge       string          `json:"bridge"`
					IsGateway    bool            `json:"isGateway"`
					Capabilities map[string]bool `json:"capabilities"`
					IPAM         struct {
						Type    string `json:"type"`
						DataDir string `json:"dataDir"`
						Ranges  [][]struct {
							Subnet, Gateway string
						} `json:"ranges"`
					} `json:"ipam"`
				} `json:"plugins"`
			}
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			if c.CNIVersion != "1.0.0" || c.Name != NetworkName(tc.node) || len(c.Plugins) != 3 {
				t.Fatalf("conflist = %s", b)
			}
			br, pm := c.Plugins[0], c.Plugins[1]
			if c.Plugins[2].Type != "firewall" {
				t.Errorf("third plugin = %+v, want firewall", c.Plugins[2])
			}
			if br.Type != "bridge" || br.Bridge != BridgeName(tc.node) || !br.IsGateway || br.IPAM.Type != "host-local" || br.IPAM.DataDir != "/data/ipam" {
				t.Errorf("bridge plugin = %+v", br)
			}
			if r := br.IPAM.Ranges; len(r) != 1 || len(r[0]) != 1 || r[0][0].Subnet != tc.wantSubnet || r[0][0].Gateway != tc.wantGW {
				t.Errorf("ranges = %+v, want %s via %s", r, tc.wantSubnet, tc.wantGW)
			}
			if pm.Type != "portmap" || !pm.Capabilities["portMappings"] {
				t.Errorf("portmap plugin = %+v", pm)
			}
		})
	}
}

// TestConfListChains: the optional plugins follow the bridge in a fixed order,
// and every list of a node shares its name and IPAM directory (one address
// space whichever list set a pod up).
func TestConfListChains(t *testing.T) {
	for _, tc := range []struct {
		chain chain
		want  []string
	}{
		{chain{}, []string{"bridge"}},
		{chain{portmap: true}, []string{"bridge", "portmap"}},
		{chain{firewall: true}, []string{"bridge", "firewall"}},
		{chain{portmap: true, firewall: true}, []string{"bridge", "portmap", "firewall"}},
	} {
		b, err := confList("n1", "10.42.0.0/24", "/data/ipam", tc.chain)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Name    string `json:"name"`
			Plugins []struct {
				Type string `json:"type"`
				IPAM struct {
					DataDir string `json:"dataDir"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range c.Plugins {
			got = append(got, p.Type)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || c.Name != NetworkName("n1") || c.Plugins[0].IPAM.DataDir != "/data/ipam" {
			t.Errorf("%+v: plugins %v (name %s, ipam %s), want %v", tc.chain, got, c.Name, c.Plugins[0].IPAM.DataDir, tc.want)
		}
	}
}
