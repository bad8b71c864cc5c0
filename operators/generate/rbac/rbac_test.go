package rbac_test

import (
	"reflect"
	"testing"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/operators/generate/markers"
	"github.com/converge-dev/converge/operators/generate/rbac"
)

func rule(t *testing.T, text string) markers.Marker {
	t.Helper()
	m, err := markers.CRD().Parse(text, markers.Package)
	if err != nil || m == nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return *m
}

func TestRoles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		markers []string
		want    []rbacv1.PolicyRule
	}{
		{name: "core is the empty group; verbs are sorted and merged",
			markers: []string{"+kubebuilder:rbac:groups=core,resources=pods,verbs=list;get", "+kubebuilder:rbac:groups=\"\",resources=pods,verbs=watch;get"},
			want:    []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}}},
		{name: "resources with the same verbs join",
			markers: []string{"+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get", "+kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get"},
			want:    []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: []string{"get"}}}},
		{name: "groups with the same resources and verbs join",
			markers: []string{"+kubebuilder:rbac:groups=a.io,resources=things,verbs=get", "+kubebuilder:rbac:groups=b.io,resources=things,verbs=get"},
			want:    []rbacv1.PolicyRule{{APIGroups: []string{"a.io", "b.io"}, Resources: []string{"things"}, Verbs: []string{"get"}}}},
		{name: "* stands alone",
			markers: []string{"+kubebuilder:rbac:groups=x.io,resources=y,verbs=get;*"},
			want:    []rbacv1.PolicyRule{{APIGroups: []string{"x.io"}, Resources: []string{"y"}, Verbs: []string{"*"}}}},
		{name: "resource names and URLs",
			markers: []string{"+kubebuilder:rbac:groups=\"\",resources=configmaps,resourceNames=a;b,verbs=get", "+kubebuilder:rbac:urls=/healthz;/metrics,verbs=get"},
			want: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/healthz", "/metrics"}, Verbs: []string{"get"}},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a", "b"}, Verbs: []string{"get"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ms []markers.Marker
			for _, m := range c.markers {
				ms = append(ms, rule(t, m))
			}
			crs, roles := rbac.Roles(ms, "manager-role")
			if len(crs) != 1 || len(roles) != 0 || crs[0].Name != "manager-role" {
				t.Fatalf("roles %+v %+v", crs, roles)
			}
			if !reflect.DeepEqual(crs[0].Rules, c.want) {
				t.Fatalf("rules\n got %+v\nwant %+v", crs[0].Rules, c.want)
			}
		})
	}
	crs, roles := rbac.Roles([]markers.Marker{rule(t, "+kubebuilder:rbac:groups=\"\",resources=events,verbs=create,namespace=ns,roleName=r")}, "x")
	if len(crs) != 0 || len(roles) != 1 || roles[0].Namespace != "ns" || roles[0].Name != "r" {
		t.Fatalf("namespaced role: %+v %+v", crs, roles)
	}
}
