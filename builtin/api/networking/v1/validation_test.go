package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

func TestValidateIngress(t *testing.T) {
	t.Parallel()
	prefix, odd := PathTypePrefix, PathType("Regex")
	svc := IngressBackend{Service: &IngressServiceBackend{Name: "web", Port: ServiceBackendPort{Number: 80}}}
	rule := func(p HTTPIngressPath) IngressSpec {
		return IngressSpec{Rules: []IngressRule{{Host: "a.example", IngressRuleValue: IngressRuleValue{HTTP: &HTTPIngressRuleValue{Paths: []HTTPIngressPath{p}}}}}}
	}
	for _, tc := range []struct {
		name string
		spec IngressSpec
		want string // "" for valid
	}{
		{"default backend", IngressSpec{DefaultBackend: &svc}, ""},
		{"rule", rule(HTTPIngressPath{Path: "/", PathType: &prefix, Backend: svc}), ""},
		{"nothing", IngressSpec{}, "either `defaultBackend` or `rules` must be specified"},
		{"no pathType", rule(HTTPIngressPath{Path: "/", Backend: svc}), "spec.rules[0].http.paths[0].pathType: Required value"},
		{"bad pathType", rule(HTTPIngressPath{Path: "/", PathType: &odd, Backend: svc}), `Unsupported value: "Regex"`},
		{"relative path", rule(HTTPIngressPath{Path: "x", PathType: &prefix, Backend: svc}), "must be an absolute path"},
		{"no port", IngressSpec{DefaultBackend: &IngressBackend{Service: &IngressServiceBackend{Name: "web"}}}, "port name or number is required"},
		{"no backend", IngressSpec{DefaultBackend: &IngressBackend{}}, "one backend (`service` or `resource`) must be specified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateIngress(&Ingress{ObjectMeta: api.ObjectMeta{Name: "i"}, Spec: tc.spec})
			got := errs.ToError()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("unexpected errors: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
}

func TestValidateNetworkingKinds(t *testing.T) {
	t.Parallel()
	ptr := func(s string) *string { return &s }
	class := func(ctrl string, p *IngressClassParametersReference) func() field.ErrorList {
		return func() field.ErrorList {
			return ValidateIngressClass(&IngressClass{Spec: IngressClassSpec{Controller: ctrl, Parameters: p}})
		}
	}
	ip := func(r *ParentReference) func() field.ErrorList {
		return func() field.ErrorList { return ValidateIPAddress(&IPAddress{Spec: IPAddressSpec{ParentRef: r}}) }
	}
	cidr := func(cidrs ...string) func() field.ErrorList {
		return func() field.ErrorList { return ValidateServiceCIDR(&ServiceCIDR{Spec: ServiceCIDRSpec{CIDRs: cidrs}}) }
	}
	cidrUpdate := func(old, now []string) func() field.ErrorList {
		return func() field.ErrorList {
			return ValidateServiceCIDRUpdate(&ServiceCIDR{Spec: ServiceCIDRSpec{CIDRs: now}}, &ServiceCIDR{Spec: ServiceCIDRSpec{CIDRs: old}})
		}
	}
	for _, tc := range []struct {
		name     string
		validate func() field.ErrorList
		want     string // "" for valid
	}{
		{"class", class("example.com/ingress", nil), ""},
		{"class without controller", class("", nil), "spec.controller: Required value"},
		{"class controller without domain", class("nginx", nil), `spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")`},
		{"class controller too long", class("example.com/"+strings.Repeat("a", 250), nil), "spec.controller: Too long: may not be more than 250 bytes"},
		{"class parameters", class("example.com/i", &IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("Namespace"), Namespace: ptr("ns")}), ""},
		{"class parameters without scope", class("example.com/i", &IngressClassParametersReference{Kind: "K", Name: "n"}), "spec.parameters.scope: Required value"},
		{"class cluster parameters with namespace", class("example.com/i", &IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("Cluster"), Namespace: ptr("ns")}),
			"spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"},
		{"class namespace parameters without namespace", class("example.com/i", &IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("Namespace")}),
			"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"},
		{"class odd scope", class("example.com/i", &IngressClassParametersReference{Kind: "K", Name: "n", Scope: ptr("World")}), `spec.parameters.scope: Unsupported value: "World"`},
		{"class parameters without kind", class("example.com/i", &IngressClassParametersReference{Name: "n", Scope: ptr("Cluster")}), "spec.parameters.kind: Required value"},
		{"ip", ip(&ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}), ""},
		{"ip without parent", ip(nil), "spec.parentRef: Required value"},
		{"ip parent without resource", ip(&ParentReference{Name: "x"}), "spec.parentRef.resource: Required value"},
		{"ip parent with a slash", ip(&ParentReference{Resource: "services", Name: "a/b"}), `spec.parentRef.name: Invalid value: "a/b": may not contain '/'`},
		{"cidr", cidr("10.96.0.0/16", "fd00::/108"), ""},
		{"no cidr", cidr(), "spec.cidrs: Required value: at least one CIDR required"},
		{"three cidrs", cidr("10.0.0.0/8", "fd00::/108", "11.0.0.0/8"), "may only hold up to 2 values"},
		{"same family twice", cidr("10.0.0.0/8", "11.0.0.0/8"), "may specify no more than one IP for each IP family"},
		{"host bits set", cidr("10.0.0.1/8"), `spec.cidrs[0]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length`},
		{"not a cidr", cidr("nope"), "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"},
		{"cidr changed", cidrUpdate([]string{"10.0.0.0/8"}, []string{"11.0.0.0/8"}), `spec.cidrs[0]: Invalid value: "11.0.0.0/8": field is immutable`},
		{"cidr gains the other family", cidrUpdate([]string{"10.0.0.0/8"}, []string{"10.0.0.0/8", "fd00::/108"}), ""},
		{"cidr dropped", cidrUpdate([]string{"10.0.0.0/8", "fd00::/108"}, []string{"10.0.0.0/8"}), "spec.cidrs: Invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.validate().ToError()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("unexpected errors: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
}

func TestIPAddressName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"10.0.0.1":                "",
		"fe80::42:1dff:fe84:f9e2": "",
		"010.0.0.1":               "must not have leading 0s",
		"::ffff:10.0.0.1":         "must not be an IPv4-mapped IPv6 address",
		"FE80::1":                 `must be in canonical form ("fe80::1")`,
		"host":                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
	} {
		got := strings.Join(IPAddressName(name, false), "; ")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("IPAddressName(%q) = %q, want %q", name, got, want)
		}
	}
}
