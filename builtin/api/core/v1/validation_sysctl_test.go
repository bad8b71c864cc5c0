package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api/field"
)

func TestValidateSysctls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		sysctls     []Sysctl
		hostNetwork bool
		hostIPC     bool
		want        []string // substrings of the error; none for valid
		notWant     []string
	}{
		{name: "the conformance mix", sysctls: []Sysctl{{Name: "foo-", Value: "bar"}, {Name: "kernel.shmmax", Value: "1"}, {Name: "safe-and-unsafe", Value: "1"}, {Name: "bar..", Value: "42"}},
			want:    []string{`spec.securityContext.sysctls[0].name: Invalid value: "foo-": must have at most 253 characters and match regex`, `Invalid value: "bar.."`},
			notWant: []string{"safe-and-unsafe", "kernel.shmmax"}},
		{name: "slashes", sysctls: []Sysctl{{Name: "net/ipv4/ip_forward", Value: "1"}}},
		{name: "empty", sysctls: []Sysctl{{Value: "1"}}, want: []string{"sysctls[0].name: Required value"}},
		{name: "duplicate", sysctls: []Sysctl{{Name: "kernel.msgmax"}, {Name: "kernel.msgmax"}}, want: []string{`sysctls[1].name: Duplicate value: "kernel.msgmax"`}},
		{name: "net with host network", sysctls: []Sysctl{{Name: "net.core.somaxconn"}}, hostNetwork: true,
			want: []string{"may not be specified when 'hostNetwork' is true"}},
		{name: "net slashes with host network", sysctls: []Sysctl{{Name: "net/core/somaxconn"}}, hostNetwork: true,
			want: []string{"may not be specified when 'hostNetwork' is true"}},
		{name: "ipc with host ipc", sysctls: []Sysctl{{Name: "fs.mqueue.msg_max"}}, hostIPC: true,
			want: []string{"may not be specified when 'hostIPC' is true"}},
		{name: "not namespaced with host network", sysctls: []Sysctl{{Name: "kernel.shmmax"}}, hostNetwork: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &PodSpec{HostNetwork: tc.hostNetwork, HostIPC: tc.hostIPC, SecurityContext: &PodSecurityContext{Sysctls: tc.sysctls}}
			errs := validateSysctls(s, fieldPathSysctls())
			got := ""
			if err := errs.ToError(); err != nil {
				got = err.Error()
			}
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("unexpected errors: %s", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("errors %q, want one containing %q", got, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("errors %q mention %q", got, w)
				}
			}
		})
	}
}

func fieldPathSysctls() *field.Path { return field.NewPath("spec", "securityContext", "sysctls") }
