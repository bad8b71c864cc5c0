package v1

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/converge-dev/converge/framework/api/field"
)

const (
	sysctlSegmentFmt      = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlContainSlashFmt = "(" + sysctlSegmentFmt + "[\\./])*" + sysctlSegmentFmt
	// sysctlMaxLength is the longest sysctl name.
	sysctlMaxLength = 253
)

var sysctlNameRegexp = regexp.MustCompile("^" + sysctlContainSlashFmt + "$")

// validateSysctls checks spec.securityContext.sysctls as Kubernetes does:
// names required, well-formed (dots or slashes between segments) and unique;
// namespaced sysctls of the network or IPC namespace are refused when the pod
// shares that namespace with the host. Whether a sysctl is safe is the
// node's decision, not validation's.
func validateSysctls(s *PodSpec, p *field.Path) field.ErrorList {
	if s.SecurityContext == nil {
		return nil
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, sc := range s.SecurityContext.Sysctls {
		np := p.Index(i).Child("name")
		switch {
		case sc.Name == "":
			errs = append(errs, field.Required(np, ""))
		case len(sc.Name) > sysctlMaxLength || !sysctlNameRegexp.MatchString(sc.Name):
			errs = append(errs, field.Invalid(np, sc.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlNameRegexp)))
		case seen[sc.Name]:
			errs = append(errs, field.Duplicate(np, sc.Name))
		}
		seen[sc.Name] = true
		switch sysctlNamespace(sc.Name) {
		case "net":
			if s.HostNetwork {
				errs = append(errs, field.Invalid(np, sc.Name, "may not be specified when 'hostNetwork' is true"))
			}
		case "ipc":
			if s.HostIPC {
				errs = append(errs, field.Invalid(np, sc.Name, "may not be specified when 'hostIPC' is true"))
			}
		}
	}
	return errs
}

// sysctlNamespace is the kernel namespace ("net", "ipc") a sysctl belongs to,
// "" when it is not namespaced or not known to be.
func sysctlNamespace(name string) string {
	// "net/ipv4/ip_forward" is "net.ipv4.ip_forward": when the first separator
	// is a slash, slashes and dots swap roles.
	if i := strings.IndexAny(name, "./"); i >= 0 && name[i] == '/' {
		name = strings.Map(func(r rune) rune {
			switch r {
			case '/':
				return '.'
			case '.':
				return '/'
			}
			return r
		}, name)
	}
	if i := strings.IndexByte(name, '*'); i >= 0 {
		name = name[:i]
	}
	switch name {
	case "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
		"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.shm", "kernel.msg": // the last two: of "kernel.shm*"
		return "ipc"
	}
	switch {
	case strings.HasPrefix(name, "net."):
		return "net"
	case strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	}
	return ""
}
