package admissionpolicy

import (
	"errors"
	"testing"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

func TestMatches(t *testing.T) {
	deployments := api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	rule := func(ops []string, groups, versions, resources []string, names ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{ResourceNames: names, RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources}}}
	}
	create := []string{"CREATE"}
	all := []string{"*"}
	sel := func(k, v string) *api.LabelSelector { return &api.LabelSelector{MatchLabels: map[string]string{k: v}} }
	exact := api.Ptr("Exact")
	obj := map[string]any{"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}}}
	attrs := func(op admission.Operation, gvr api.GroupVersionResource, sub string) *admission.Attributes {
		return &admission.Attributes{Operation: op, Resource: gvr, Subresource: sub, Namespace: "team-a", Name: "web",
			Namespaced: true, Object: obj, Kind: api.GroupVersionKind{Group: gvr.Group, Version: gvr.Version, Kind: "Deployment"}}
	}
	betaDeployments := api.GroupVersionResource{Group: "apps", Version: "v1beta1", Resource: "deployments"}
	tests := []struct {
		name   string
		m      *admissionregistrationv1.MatchResources
		a      *admission.Attributes
		nsErr  error
		want   bool
		wantEq bool
		err    bool
	}{
		{name: "nil matches everything", m: nil, a: attrs(admission.Create, deployments, ""), want: true},
		{name: "no rules (a binding) matches every resource", m: &admissionregistrationv1.MatchResources{}, a: attrs(admission.Delete, deployments, ""), want: true},
		{name: "rule matches", m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(create, []string{"apps"}, []string{"v1"}, []string{"deployments"})}}, a: attrs(admission.Create, deployments, ""), want: true},
		{name: "operation differs", m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(create, []string{"apps"}, []string{"v1"}, []string{"deployments"})}}, a: attrs(admission.Update, deployments, "")},
		{name: "subresource needs its own rule", m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(all, all, all, []string{"deployments"})}}, a: attrs(admission.Update, deployments, "status")},
		{name: "*/status matches the status subresource", m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(all, all, all, []string{"*/status"})}}, a: attrs(admission.Update, deployments, "status"), want: true},
		{name: "resourceNames select by name", m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(all, all, all, []string{"*"}, "other")}}, a: attrs(admission.Create, deployments, "")},
		{name: "excluded rule wins", m: &admissionregistrationv1.MatchResources{
			ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule(all, all, all, []string{"*"})},
			ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, []string{"apps"}, all, []string{"deployments"}, "web")},
		}, a: attrs(admission.Create, deployments, "")},
		{name: "object selector", m: &admissionregistrationv1.MatchResources{ObjectSelector: sel("app", "db")}, a: attrs(admission.Create, deployments, "")},
		{name: "namespace selector", m: &admissionregistrationv1.MatchResources{NamespaceSelector: sel("team", "a")}, a: attrs(admission.Create, deployments, ""), want: true},
		{name: "namespace selector, other labels", m: &admissionregistrationv1.MatchResources{NamespaceSelector: sel("team", "b")}, a: attrs(admission.Create, deployments, "")},
		{name: "namespace lookup fails", m: &admissionregistrationv1.MatchResources{NamespaceSelector: sel("team", "a")}, a: attrs(admission.Create, deployments, ""),
			nsErr: errors.New("no namespace"), err: true},
		{name: "cluster-scoped objects pass namespace selectors", m: &admissionregistrationv1.MatchResources{NamespaceSelector: sel("team", "b")},
			a: &admission.Attributes{Operation: admission.Create, Resource: api.GroupVersionResource{Version: "v1", Resource: "nodes"}}, want: true},
		{name: "equivalent version (matchPolicy Equivalent)", m: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(create, []string{"apps"}, []string{"v1beta1"}, []string{"deployments"})}}, a: attrs(admission.Create, deployments, ""), want: true, wantEq: true},
		{name: "equivalent version, matchPolicy Exact", m: &admissionregistrationv1.MatchResources{MatchPolicy: exact, ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(create, []string{"apps"}, []string{"v1beta1"}, []string{"deployments"})}}, a: attrs(admission.Create, deployments, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &request{Attributes: tt.a,
				nsLabels: func() (map[string]string, error) { return map[string]string{"team": "a"}, tt.nsErr },
				equivalents: func() []admission.EquivalentResource {
					return []admission.EquivalentResource{{Resource: betaDeployments, Kind: api.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}}}
				}}
			res, ok, err := matches(tt.m, req)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if ok != tt.want {
				t.Errorf("matches = %v, want %v", ok, tt.want)
			}
			if (res.eq != nil) != tt.wantEq {
				t.Errorf("matched through an equivalent = %v, want %v", res.eq != nil, tt.wantEq)
			}
		})
	}
}
