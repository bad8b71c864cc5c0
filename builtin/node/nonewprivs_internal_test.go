package node

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

func TestNoNewPrivileges(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, c := range []struct {
		name string
		sc   *corev1.SecurityContext
		want bool
	}{
		{"no security context", nil, false},
		{"unset", &corev1.SecurityContext{}, false},
		{"allowed", &corev1.SecurityContext{AllowPrivilegeEscalation: &yes}, false},
		{"not allowed", &corev1.SecurityContext{AllowPrivilegeEscalation: &no}, true},
		{"not allowed, privileged false", &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Privileged: &no}, true},
		{"not allowed but privileged", &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Privileged: &yes}, false},
	} {
		if got := noNewPrivileges(c.sc); got != c.want {
			t.Errorf("%s: noNewPrivileges = %v, want %v", c.name, got, c.want)
		}
	}
}
