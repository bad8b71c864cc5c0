package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
)

// Limits of a pod's resolver configuration, as the kubelet applies them.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchLineChars = 2048
	maxDNSSearchPathChars = 253
)

// resolvConfPath is where a pod's resolver configuration is mounted.
const resolvConfPath = "/etc/resolv.conf"

// resolverConfig is the content of a resolv.conf.
type resolverConfig struct {
	Nameservers, Searches, Options []string
}

// render writes the configuration in resolv.conf syntax.
func (c resolverConfig) render() []byte {
	var b bytes.Buffer
	if len(c.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.Searches, " "))
	}
	for _, ns := range c.Nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", ns)
	}
	if len(c.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.Options, " "))
	}
	return b.Bytes()
}

// parseResolvConf reads the nameserver, search and options lines of a
// resolv.conf (the last search line wins, as the resolver has it).
func parseResolvConf(data []byte) resolverConfig {
	var c resolverConfig
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line, _, _ = strings.Cut(line, ";")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			c.Nameservers = append(c.Nameservers, f[1])
		case "search":
			c.Searches = nil
			for _, s := range f[1:] {
				if s = strings.TrimSuffix(s, "."); s != "" {
					c.Searches = append(c.Searches, s)
				}
			}
		case "options":
			c.Options = append(c.Options, f[1:]...)
		}
	}
	return c
}

// hostResolvConf picks the host resolver file pods with dnsPolicy Default
// get: path, unless it only names the systemd-resolved stub (127.0.0.53,
// which a pod with its own network cannot reach) and the real list exists.
func hostResolvConf(path, systemdList string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return path
	}
	c := parseResolvConf(data)
	if len(c.Nameservers) > 0 && !slices.ContainsFunc(c.Nameservers, func(s string) bool { return s != "127.0.0.53" }) {
		if _, err := os.Stat(systemdList); err == nil {
			return systemdList
		}
	}
	return path
}

// dnsEvent is a warning about a pod's resolver configuration.
type dnsEvent struct{ Reason, Message string }

// podResolverConfig forms a pod's resolv.conf as the kubelet does: by
// dnsPolicy (ClusterFirst, the default, falls back to Default for
// hostNetwork pods and when no cluster DNS is configured), then dnsConfig
// merged in, then the resolver's limits applied. It is a pure function.
func podResolverConfig(pod *corev1.Pod, clusterDNS []string, clusterDomain string, host resolverConfig) (resolverConfig, []dnsEvent) {
	var events []dnsEvent
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	cluster := policy == corev1.DNSClusterFirstWithHostNet || (policy == corev1.DNSClusterFirst && !pod.Spec.HostNetwork)
	if cluster && len(clusterDNS) == 0 {
		events = append(events, dnsEvent{"MissingClusterDNS", fmt.Sprintf(
			"pod: %q. kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.",
			pod.Name+"_"+pod.Namespace+"("+pod.UID+")", policy, corev1.DNSDefault)})
		cluster = false
	}
	var c resolverConfig
	switch {
	case policy == corev1.DNSNone:
	case cluster:
		c.Nameservers = slices.Clone(clusterDNS)
		if clusterDomain != "" {
			c.Searches = []string{pod.Namespace + ".svc." + clusterDomain, "svc." + clusterDomain, clusterDomain}
		}
		c.Searches = append(c.Searches, host.Searches...)
		c.Options = []string{"ndots:5"}
	default:
		c = resolverConfig{Nameservers: slices.Clone(host.Nameservers), Searches: slices.Clone(host.Searches), Options: slices.Clone(host.Options)}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		c.Nameservers = append(c.Nameservers, dc.Nameservers...)
		for _, s := range dc.Searches {
			c.Searches = append(c.Searches, strings.TrimSuffix(s, "."))
		}
		for _, o := range dc.Options {
			c.Options = setOption(c.Options, o)
		}
	}
	c.Nameservers, c.Searches = uniq(c.Nameservers), uniq(c.Searches)
	if len(c.Nameservers) > maxDNSNameservers {
		c.Nameservers = c.Nameservers[:maxDNSNameservers]
		events = append(events, dnsEvent{"DNSConfigForming",
			"Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(c.Nameservers, " ")})
	}
	if s, cut := fitSearches(c.Searches); cut {
		c.Searches = s
		events = append(events, dnsEvent{"DNSConfigForming",
			"Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(s, " ")})
	}
	return c, events
}

// setOption sets a dnsConfig option ("name" or "name:value") in opts,
// replacing one of the same name in place.
func setOption(opts []string, o corev1.PodDNSConfigOption) []string {
	s := o.Name
	if o.Value != nil && *o.Value != "" {
		s += ":" + *o.Value
	}
	for i, have := range opts {
		if name, _, _ := strings.Cut(have, ":"); name == o.Name {
			opts[i] = s
			return opts
		}
	}
	return append(opts, s)
}

// fitSearches drops search paths beyond the resolver's limits: more than 32,
// longer than a domain name may be, or past 2048 characters on the line.
func fitSearches(s []string) ([]string, bool) {
	out := slices.DeleteFunc(slices.Clone(s), func(p string) bool { return len(p) > maxDNSSearchPathChars })
	if len(out) > maxDNSSearchPaths {
		out = out[:maxDNSSearchPaths]
	}
	for len(out) > 0 && len(strings.Join(out, " ")) > maxDNSSearchLineChars {
		out = out[:len(out)-1]
	}
	return out, len(out) != len(s)
}

// uniq drops empty and repeated entries, keeping the first.
func uniq(s []string) []string {
	seen := map[string]bool{}
	return slices.DeleteFunc(s, func(v string) bool {
		if v == "" || seen[v] {
			return true
		}
		seen[v] = true
		return false
	})
}

// resolvConfFile is the pod's resolv.conf on the host.
func (w *podWorker) resolvConfFile() string { return filepath.Join(w.dir, "resolv.conf") }

// setupDNS writes the pod's resolv.conf (reporting what the kubelet warns
// about as events) when its containers will see it: runtimes whose mounts
// are private to the container (cri.PrivateMounter).
func (w *podWorker) setupDNS(ctx context.Context) error {
	if !w.a.privateMounts() {
		return nil
	}
	pod := w.current()
	data, err := os.ReadFile(w.a.opts.ResolvConf)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read the host's resolver configuration: %w", err)
	}
	c, events := podResolverConfig(pod, w.a.opts.ClusterDNS, w.a.opts.ClusterDomain, parseResolvConf(data))
	for _, e := range events {
		w.a.rec.Event(ctx, pod, "Warning", e.Reason, e.Message)
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("create pod dir: %w", err)
	}
	if err := os.WriteFile(w.resolvConfFile(), c.render(), 0o644); err != nil {
		return fmt.Errorf("write the pod's resolv.conf: %w", err)
	}
	return nil
}

// dnsMount mounts the pod's resolv.conf at /etc/resolv.conf unless the
// container mounts something there itself or the file was not written.
func (w *podWorker) dnsMount(mounts []cri.Mount) []cri.Mount {
	if slices.ContainsFunc(mounts, func(m cri.Mount) bool { return filepath.Clean(m.ContainerPath) == resolvConfPath }) {
		return mounts
	}
	if _, err := os.Stat(w.resolvConfFile()); err != nil {
		return mounts
	}
	return append(mounts, cri.Mount{HostPath: w.resolvConfFile(), ContainerPath: resolvConfPath})
}

// privateMounts reports whether the runtime's mounts stay inside the
// container (cri.PrivateMounter).
func (a *Agent) privateMounts() bool {
	pm, ok := a.rt.(cri.PrivateMounter)
	return ok && pm.PrivateMounts()
}
