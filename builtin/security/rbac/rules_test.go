package rbac

import (
	"testing"

	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

func TestRuleAllows(t *testing.T) {
	t.Parallel()
	res := func(verb, group, resource, sub, name string) filters.Attributes {
		return filters.Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
	}
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		a    filters.Attributes
		want bool
	}{
		{"exact", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("get", "", "pods", "", "p"), true},
		{"other verb", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("list", "", "pods", "", ""), false},
		{"other group", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"deployments"}}, res("get", "apps", "deployments", "", ""), false},
		{"subresource not implied", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("get", "", "pods", "log", "p"), false},
		{"pods/log", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}, res("get", "", "pods", "log", "p"), true},
		{"*/scale", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "scale", "d"), true},
		{"* covers subresources", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, res("create", "", "pods", "eviction", "p"), true},
		{"resourceNames", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "b"), false},
		{"resourceNames list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("list", "", "configmaps", "", ""), false},
		{"url prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, filters.Attributes{Verb: "get", Path: "/apis/apps/v1"}, true},
		{"url exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, filters.Attributes{Verb: "get", Path: "/healthz/etcd"}, false},
	}
	for _, tt := range tests {
		if got := RuleAllows(tt.a, &tt.rule); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSubjects(t *testing.T) {
	t.Parallel()
	sa := filters.ServiceAccountUser("ns", "builder", "")
	if !appliesTo(sa, rbacv1.Subject{Kind: "ServiceAccount", Name: "builder"}, "ns") {
		t.Error("ServiceAccount subject without namespace should default to the binding's")
	}
	if appliesTo(sa, rbacv1.Subject{Kind: "ServiceAccount", Name: "builder"}, "") {
		t.Error("ServiceAccount subject without any namespace matched")
	}
	if !appliesTo(sa, rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts:ns"}, "") {
		t.Error("namespace ServiceAccounts group")
	}
}

func TestCovers(t *testing.T) {
	t.Parallel()
	owner := []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/*"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz*"}},
	}
	ok, missing := Covers(owner, []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}, ResourceNames: []string{"a"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz/etcd"}},
	})
	if !ok {
		t.Errorf("want covered, missing %v", missing)
	}
	ok, missing = Covers(owner, []rbacv1.PolicyRule{{Verbs: []string{"get", "delete"}, APIGroups: []string{""}, Resources: []string{"pods", "secrets"}}})
	if ok || len(missing) != 3 {
		t.Fatalf("missing %v", missing)
	}
	if got := CompactString(missing[0]); got != `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}` {
		t.Errorf("CompactString %s", got)
	}
}
