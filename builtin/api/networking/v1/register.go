package v1

import (
	"reflect"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the networking.k8s.io/v1 resources (ingresses,
// namespaced). Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion, Resource: "ingresses", Kind: "Ingress", ListKind: "IngressList", Singular: "ingress",
		ShortNames: []string{"ing"}, Namespaced: true,
		Strategy:          registry.Typed[Ingress]{Validate: ValidateIngress, ValidateUpdateFunc: func(in, _ *Ingress) field.ErrorList { return ValidateIngress(in) }},
		StatusSubresource: true, Generation: true, NameValidation: validation.NameIsDNSSubdomain,
		Type: reflect.TypeFor[Ingress](), Printer: ingressPrinter(),
	}}
}

// AddToScheme registers Ingress and IngressList in s under networking.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &Ingress{}, &IngressList{})
}

func ingressPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
			{Name: "Class", Type: "string", Description: "ingressClassName is the name of an IngressClass cluster resource."},
			{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the IngressRuleValue is applied."},
			{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer."},
			{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open."},
			{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			in, err := registry.FromMap[Ingress](obj)
			if err != nil {
				return nil, err
			}
			class := "<none>"
			if in.Spec.IngressClassName != nil {
				class = *in.Spec.IngressClassName
			}
			var hosts, addrs []string
			for _, r := range in.Spec.Rules {
				if r.Host != "" {
					hosts = append(hosts, r.Host)
				}
			}
			for _, lb := range in.Status.LoadBalancer.Ingress {
				if lb.IP != "" {
					addrs = append(addrs, lb.IP)
				} else if lb.Hostname != "" {
					addrs = append(addrs, lb.Hostname)
				}
			}
			hostCell := strings.Join(hosts, ",")
			if hostCell == "" {
				hostCell = "*"
			}
			ports := "80"
			if len(in.Spec.TLS) > 0 {
				ports = "80, 443"
			}
			return []any{in.Name, class, hostCell, strings.Join(addrs, ","), ports, registry.Age(in.CreationTimestamp, now)}, nil
		},
	}
}
