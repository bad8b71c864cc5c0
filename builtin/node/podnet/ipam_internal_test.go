package podnet

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAddrStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		cidr string
		// steps: "+id" allocates for id, "-id" releases id's IP.
		steps []string
		// want is the IP each "+" step gets ("" for an exhausted range).
		want []string
	}{
		{name: "skips the gateway, goes round-robin", cidr: "10.9.0.0/29",
			steps: []string{"+a", "+b", "-a", "+c"}, want: []string{"10.9.0.2", "10.9.0.3", "10.9.0.4"}},
		{name: "wraps around to a released IP", cidr: "10.9.0.0/29",
			steps: []string{"+a", "+b", "+c", "+d", "+e", "-b", "+f"},
			want:  []string{"10.9.0.2", "10.9.0.3", "10.9.0.4", "10.9.0.5", "10.9.0.6", "10.9.0.3"}},
		{name: "a /30 has one pod address", cidr: "10.9.0.0/30",
			steps: []string{"+a", "+b", "-a", "+c"}, want: []string{"10.9.0.2", "", "10.9.0.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := newAddrStore(dir, "net", tc.cidr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, step := range tc.steps {
				id := step[1:]
				if step[0] == '-' {
					if err := s.release(id, "eth0"); err != nil {
						t.Fatalf("release %s: %v", id, err)
					}
					continue
				}
				ip, err := s.allocate(id, "eth0")
				if err != nil {
					if !strings.Contains(err.Error(), "no IP address left") {
						t.Fatalf("allocate %s: %v", id, err)
					}
					got = append(got, "")
					continue
				}
				got = append(got, ip.String())
				// host-local's format: the file named by the IP holds "ID\r\nifname".
				b, err := os.ReadFile(filepath.Join(dir, "net", ip.String()))
				if err != nil || string(b) != id+"\r\neth0" {
					t.Errorf("allocation file of %s: %q, %v", ip, b, err)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("allocated %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAddrStoreReleasesHostLocalAllocations(t *testing.T) {
	dir := t.TempDir()
	s, err := newAddrStore(dir, "net", "10.9.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	// As host-local leaves them: the current format and the older one (the ID alone).
	if err := os.MkdirAll(filepath.Join(dir, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	for ip, content := range map[string]string{"10.9.0.7": "pod-a\r\neth0", "10.9.0.8": "pod-a", "10.9.0.9": "pod-b\r\neth0"} {
		if err := os.WriteFile(filepath.Join(dir, "net", ip), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "net", lastFile), []byte("10.9.0.9"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.release("pod-a", "eth0"); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "net", "10.*"))
	if len(left) != 1 || filepath.Base(left[0]) != "10.9.0.9" {
		t.Errorf("left after releasing pod-a: %v", left)
	}
	ip, err := s.allocate("pod-c", "eth0")
	if err != nil || ip != netip.MustParseAddr("10.9.0.10") {
		t.Errorf("allocate after host-local's last IP: %v, %v", ip, err)
	}
}
