package node

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

func TestNormalizeSysctl(t *testing.T) {
	for in, want := range map[string]string{
		"kernel.shm_rmid_forced":           "kernel.shm_rmid_forced",
		"kernel/shm_rmid_forced":           "kernel.shm_rmid_forced",
		"net/ipv4/conf/eno2.100/rp_filter": "net.ipv4.conf.eno2/100.rp_filter",
		"net.ipv4.conf.eno2/100.rp_filter": "net.ipv4.conf.eno2/100.rp_filter",
		"plain":                            "plain",
	} {
		if got := normalizeSysctl(in); got != want {
			t.Errorf("normalizeSysctl(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckSysctls(t *testing.T) {
	pod := func(hostNet, hostIPC bool, names ...string) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.HostNetwork, p.Spec.HostIPC = hostNet, hostIPC
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"none", &corev1.Pod{}, ""},
		{"safe ones", pod(false, false, "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "kernel/shm_rmid_forced"), ""},
		{"unsafe", pod(false, false, "kernel.shm_rmid_forced", "kernel.msgmax"), `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{"net with host network", pod(true, false, "net.ipv4.tcp_syncookies"), `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled`},
		{"shm with host IPC", pod(false, true, "kernel.shm_rmid_forced"), `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled`},
		{"shm with host network", pod(true, false, "kernel.shm_rmid_forced"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSysctls(tc.pod)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("checkSysctls: %q, want %q", got, tc.want)
			}
		})
	}
}
