package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

func TestPodResolverConfig(t *testing.T) {
	t.Parallel()
	host := resolverConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2"}, Searches: []string{"corp.example"}, Options: []string{"edns0", "ndots:1"}}
	clusterSearch := []string{"team.svc.cluster.local", "svc.cluster.local", "cluster.local"}
	many := func(n int, f string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(f, i)
		}
		return out
	}
	long := strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + "." + strings.Repeat("d", 60) // 243 chars
	tests := []struct {
		name       string
		policy     corev1.DNSPolicy
		hostNet    bool
		dnsConfig  *corev1.PodDNSConfig
		clusterDNS []string
		want       resolverConfig
		events     []string
	}{
		{name: "ClusterFirst is the default", clusterDNS: []string{"10.96.0.10"},
			want: resolverConfig{Nameservers: []string{"10.96.0.10"}, Searches: append(clusterSearch, "corp.example"), Options: []string{"ndots:5"}}},
		{name: "ClusterFirst with hostNetwork gets the host's", policy: corev1.DNSClusterFirst, hostNet: true, clusterDNS: []string{"10.96.0.10"},
			want: host},
		{name: "ClusterFirstWithHostNet", policy: corev1.DNSClusterFirstWithHostNet, hostNet: true, clusterDNS: []string{"10.96.0.10"},
			want: resolverConfig{Nameservers: []string{"10.96.0.10"}, Searches: append(clusterSearch, "corp.example"), Options: []string{"ndots:5"}}},
		{name: "no cluster DNS falls back to Default", policy: corev1.DNSClusterFirst,
			want: host, events: []string{"MissingClusterDNS"}},
		{name: "Default", policy: corev1.DNSDefault, clusterDNS: []string{"10.96.0.10"}, want: host},
		{name: "None takes dnsConfig only", policy: corev1.DNSNone, clusterDNS: []string{"10.96.0.10"},
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example."}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: api.Ptr("2")}, {Name: "rotate"}}},
			want:      resolverConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example"}, Options: []string{"ndots:2", "rotate"}}},
		{name: "dnsConfig merges: duplicates dropped, options overridden", clusterDNS: []string{"10.96.0.10"},
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"}, Searches: []string{"svc.cluster.local", "b.example"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: api.Ptr("3")}, {Name: "edns0"}}},
			want: resolverConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"}, Searches: append(clusterSearch, "corp.example", "b.example"), Options: []string{"ndots:3", "edns0"}}},
		{name: "more than 3 nameservers are cut", policy: corev1.DNSDefault,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}},
			want:      resolverConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2", "1.1.1.1"}, Searches: host.Searches, Options: host.Options},
			events:    []string{"DNSConfigForming"}},
		{name: "more than 32 search paths are cut", policy: corev1.DNSNone,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: many(40, "s%d.example")},
			want:      resolverConfig{Nameservers: []string{"1.1.1.1"}, Searches: many(32, "s%d.example")},
			events:    []string{"DNSConfigForming"}},
		{name: "search line over 2048 characters is cut", policy: corev1.DNSNone,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: many(10, "%d"+long)},
			want:      resolverConfig{Nameservers: []string{"1.1.1.1"}, Searches: many(8, "%d"+long)},
			events:    []string{"DNSConfigForming"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "team", Name: "p", UID: "u"},
				Spec: corev1.PodSpec{DNSPolicy: tt.policy, HostNetwork: tt.hostNet, DNSConfig: tt.dnsConfig}}
			got, events := podResolverConfig(pod, tt.clusterDNS, "cluster.local", host)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			var reasons []string
			for _, e := range events {
				reasons = append(reasons, e.Reason)
			}
			if diff := cmp.Diff(tt.events, reasons); diff != "" {
				t.Errorf("events (-want +got):\n%s\n%v", diff, events)
			}
		})
	}
}

func TestResolvConfFiles(t *testing.T) {
	t.Parallel()
	got := parseResolvConf([]byte("# comment\nnameserver 192.0.2.1\nsearch old.example\nsearch a.example. b.example ; x\noptions ndots:2 edns0\nnameserver 192.0.2.2 # second\ndomain ignored\n"))
	want := resolverConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2"}, Searches: []string{"a.example", "b.example"}, Options: []string{"ndots:2", "edns0"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	if r := string(want.render()); r != "search a.example b.example\nnameserver 192.0.2.1\nnameserver 192.0.2.2\noptions ndots:2 edns0\n" {
		t.Errorf("render: %q", r)
	}

	dir := t.TempDir()
	stub, real, other := filepath.Join(dir, "stub"), filepath.Join(dir, "real"), filepath.Join(dir, "other")
	for p, data := range map[string]string{stub: "nameserver 127.0.0.53\noptions edns0\n", real: "nameserver 192.0.2.1\n", other: "nameserver 127.0.0.53\nnameserver 192.0.2.9\n"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ path, systemd, want string }{
		{stub, real, real},                       // only the stub: the real list
		{stub, filepath.Join(dir, "none"), stub}, // no real list: the stub
		{other, real, other},                     // a real server too
		{filepath.Join(dir, "missing"), real, filepath.Join(dir, "missing")},
	} {
		if got := hostResolvConf(c.path, c.systemd); got != c.want {
			t.Errorf("hostResolvConf(%s, %s) = %s, want %s", c.path, c.systemd, got, c.want)
		}
	}
}
