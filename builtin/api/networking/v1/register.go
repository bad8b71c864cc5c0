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

// Resources returns the networking.k8s.io/v1 resources: ingresses
// (namespaced), ingressclasses, ipaddresses and servicecidrs (cluster-scoped).
// Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{{
		GroupVersion: GroupVersion, Resource: "ingresses", Kind: "Ingress", ListKind: "IngressList", Singular: "ingress",
		ShortNames: []string{"ing"}, Namespaced: true,
		Strategy:          registry.Typed[Ingress]{Validate: ValidateIngress, ValidateUpdateFunc: func(in, _ *Ingress) field.ErrorList { return ValidateIngress(in) }},
		StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, NameValidation: validation.NameIsDNSSubdomain,
		Type: reflect.TypeFor[Ingress](), Printer: ingressPrinter(),
	}, {
		GroupVersion: GroupVersion, Resource: "ingressclasses", Kind: "IngressClass", ListKind: "IngressClassList", Singular: "ingressclass",
		Strategy:       registry.Typed[IngressClass]{Validate: ValidateIngressClass, ValidateUpdateFunc: ValidateIngressClassUpdate},
		Generation:     true,
		NameValidation: validation.NameIsDNSSubdomain,
		Type:           reflect.TypeFor[IngressClass](), Printer: ingressClassPrinter(),
	}, {
		GroupVersion: GroupVersion, Resource: "ipaddresses", Kind: "IPAddress", ListKind: "IPAddressList", Singular: "ipaddress",
		ShortNames:     []string{"ip"},
		Strategy:       registry.Typed[IPAddress]{Validate: ValidateIPAddress, ValidateUpdateFunc: ValidateIPAddressUpdate},
		NameValidation: IPAddressName,
		Type:           reflect.TypeFor[IPAddress](), Printer: ipAddressPrinter(),
	}, {
		GroupVersion: GroupVersion, Resource: "servicecidrs", Kind: "ServiceCIDR", ListKind: "ServiceCIDRList", Singular: "servicecidr",
		Strategy: registry.Typed[ServiceCIDR]{Validate: ValidateServiceCIDR, ValidateUpdateFunc: ValidateServiceCIDRUpdate,
			ValidateStatusUpdateFunc: func(_, _ *ServiceCIDR) field.ErrorList { return nil }},
		StatusSubresource: true, NameValidation: validation.NameIsDNSSubdomain,
		Type: reflect.TypeFor[ServiceCIDR](), Printer: serviceCIDRPrinter(),
	}}
}

// AddToScheme registers the kinds and their lists in s under networking.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &Ingress{}, &IngressList{}, &IngressClass{}, &IngressClassList{},
		&IPAddress{}, &IPAddressList{}, &ServiceCIDR{}, &ServiceCIDRList{})
}

var (
	nameColumn = registry.Column{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."}
	ageColumn  = registry.Column{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."}
)

func ingressClassPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn,
			{Name: "Controller", Type: "string", Description: "Controller refers to the name of the controller that should handle this class."},
			{Name: "Parameters", Type: "string", Description: "Parameters is a link to a custom resource containing additional configuration for the controller."},
			ageColumn,
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			ic, err := registry.FromMap[IngressClass](obj)
			if err != nil {
				return nil, err
			}
			params := "<none>"
			if p := ic.Spec.Parameters; p != nil {
				params = p.Kind
				if p.APIGroup != nil {
					params += "." + *p.APIGroup
				}
				params += "/" + p.Name
			}
			return []any{ic.Name, ic.Spec.Controller, params, registry.Age(ic.CreationTimestamp, now)}, nil
		},
	}
}

func ipAddressPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn,
			{Name: "ParentRef", Type: "string", Description: "ParentRef references the resource that an IPAddress is attached to."},
		},
		Row: func(obj map[string]any, _ time.Time) ([]any, error) {
			ip, err := registry.FromMap[IPAddress](obj)
			if err != nil {
				return nil, err
			}
			parent := "<none>"
			if r := ip.Spec.ParentRef; r != nil {
				parent = r.Resource
				if r.Group != "" {
					parent += "." + r.Group
				}
				parent += "/"
				if r.Namespace != "" {
					parent += r.Namespace + "/"
				}
				parent += r.Name
			}
			return []any{ip.Name, parent}, nil
		},
	}
}

func serviceCIDRPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn,
			{Name: "CIDRs", Type: "string", Description: "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs."},
			ageColumn,
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			c, err := registry.FromMap[ServiceCIDR](obj)
			if err != nil {
				return nil, err
			}
			return []any{c.Name, strings.Join(c.Spec.CIDRs, ","), registry.Age(c.CreationTimestamp, now)}, nil
		},
	}
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
