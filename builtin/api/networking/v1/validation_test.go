package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
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
