package node

import (
	"fmt"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// reasonSysctlForbidden is the kubelet's reason for a pod it refuses because
// of its sysctls.
const reasonSysctlForbidden = "SysctlForbidden"

// safeSysctls are the sysctls every pod may set, as the kubelet's safe
// allowlist: namespaced, and unable to affect other pods or the node.
var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced":              true,
	"net.ipv4.ip_local_port_range":        true,
	"net.ipv4.tcp_syncookies":             true,
	"net.ipv4.ping_group_range":           true,
	"net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.ip_local_reserved_ports":    true,
	"net.ipv4.tcp_keepalive_time":         true,
	"net.ipv4.tcp_fin_timeout":            true,
	"net.ipv4.tcp_keepalive_intvl":        true,
	"net.ipv4.tcp_keepalive_probes":       true,
	"net.ipv4.tcp_rmem":                   true,
	"net.ipv4.tcp_wmem":                   true,
}

// normalizeSysctl writes a sysctl name with dots between its parts, as the
// kubelet does: a name whose first separator is a slash
// ("net/ipv4/conf/eno2.100/rp_filter") has its slashes and dots swapped
// ("net.ipv4.conf.eno2/100.rp_filter").
func normalizeSysctl(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}

// podSysctls returns the pod's sysctls by normalized name (nil when none).
func podSysctls(pod *corev1.Pod) map[string]string {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return nil
	}
	out := make(map[string]string, len(sc.Sysctls))
	for _, s := range sc.Sysctls {
		out[normalizeSysctl(s.Name)] = s.Value
	}
	return out
}

// checkSysctls is the kubelet's sysctl admission with no unsafe sysctl
// allowed (its default): a pod may set only the safe sysctls, and none of the network
// namespace's when it uses the host's network nor the IPC namespace's when
// it uses the host's IPC. The error is the message of the rejection.
func checkSysctls(pod *corev1.Pod) error {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return nil
	}
	for _, s := range sc.Sysctls {
		name := normalizeSysctl(s.Name)
		if !safeSysctls[name] {
			return fmt.Errorf("forbidden sysctl: %q not allowlisted", name)
		}
		switch {
		case pod.Spec.HostNetwork && strings.HasPrefix(name, "net."):
			return fmt.Errorf("forbidden sysctl: %q not allowed with host net enabled", name)
		case pod.Spec.HostIPC && (strings.HasPrefix(name, "kernel.shm") || strings.HasPrefix(name, "kernel.msg") || name == "kernel.sem" || strings.HasPrefix(name, "fs.mqueue.")):
			return fmt.Errorf("forbidden sysctl: %q not allowed with host ipc enabled", name)
		}
	}
	return nil
}
