package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is networking.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "networking.k8s.io", Version: "v1"}

// Ingress routes external HTTP(S) traffic to Services, as an ingress
// controller configures it.
type Ingress struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           IngressSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         IngressStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// IngressList is a list of Ingresses.
type IngressList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Ingress `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// IngressSpec is the desired routing.
type IngressSpec struct {
	IngressClassName *string         `json:"ingressClassName,omitempty" protobuf:"bytes,4,opt,name=ingressClassName"`
	DefaultBackend   *IngressBackend `json:"defaultBackend,omitempty" protobuf:"bytes,1,opt,name=defaultBackend"`
	TLS              []IngressTLS    `json:"tls,omitempty" protobuf:"bytes,2,rep,name=tls"`
	Rules            []IngressRule   `json:"rules,omitempty" protobuf:"bytes,3,rep,name=rules"`
}

// IngressTLS names the certificate Secret of some hosts.
type IngressTLS struct {
	Hosts      []string `json:"hosts,omitempty" protobuf:"bytes,1,rep,name=hosts"`
	SecretName string   `json:"secretName,omitempty" protobuf:"bytes,2,opt,name=secretName"`
}

// IngressStatus is what the ingress controller reports.
type IngressStatus struct {
	LoadBalancer IngressLoadBalancerStatus `json:"loadBalancer,omitempty" protobuf:"bytes,1,opt,name=loadBalancer"`
}

// IngressLoadBalancerStatus lists the load balancer's ingress points.
type IngressLoadBalancerStatus struct {
	Ingress []IngressLoadBalancerIngress `json:"ingress,omitempty" protobuf:"bytes,1,rep,name=ingress"`
}

// IngressLoadBalancerIngress is one ingress point.
type IngressLoadBalancerIngress struct {
	IP       string              `json:"ip,omitempty" protobuf:"bytes,1,opt,name=ip"`
	Hostname string              `json:"hostname,omitempty" protobuf:"bytes,2,opt,name=hostname"`
	Ports    []IngressPortStatus `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
}

// IngressPortStatus is the state of one port of an ingress point.
type IngressPortStatus struct {
	Port     int32           `json:"port" protobuf:"varint,1,opt,name=port"`
	Protocol corev1.Protocol `json:"protocol" protobuf:"bytes,2,opt,name=protocol,casttype=Protocol"`
	Error    *string         `json:"error,omitempty" protobuf:"bytes,3,opt,name=error"`
}

// IngressRule routes the requests for one host (all hosts when empty).
type IngressRule struct {
	Host             string `json:"host,omitempty" protobuf:"bytes,1,opt,name=host"`
	IngressRuleValue `json:",inline" protobuf:"bytes,2,opt,name=ingressRuleValue"`
}

// IngressRuleValue holds the HTTP paths of a rule.
type IngressRuleValue struct {
	HTTP *HTTPIngressRuleValue `json:"http,omitempty" protobuf:"bytes,1,opt,name=http"`
}

// HTTPIngressRuleValue lists paths and their backends.
type HTTPIngressRuleValue struct {
	Paths []HTTPIngressPath `json:"paths" protobuf:"bytes,1,rep,name=paths"`
}

// PathType is how a path is matched.
type PathType string

// Path types.
const (
	PathTypeExact                  PathType = "Exact"
	PathTypePrefix                 PathType = "Prefix"
	PathTypeImplementationSpecific PathType = "ImplementationSpecific"
)

// HTTPIngressPath sends the requests for a path to a backend.
type HTTPIngressPath struct {
	Path     string         `json:"path,omitempty" protobuf:"bytes,1,opt,name=path"`
	PathType *PathType      `json:"pathType" protobuf:"bytes,3,opt,name=pathType"`
	Backend  IngressBackend `json:"backend" protobuf:"bytes,2,opt,name=backend"`
}

// IngressBackend is a Service port or another resource.
type IngressBackend struct {
	Service  *IngressServiceBackend            `json:"service,omitempty" protobuf:"bytes,4,opt,name=service"`
	Resource *corev1.TypedLocalObjectReference `json:"resource,omitempty" protobuf:"bytes,3,opt,name=resource"`
}

// IngressServiceBackend is a Service and one of its ports.
type IngressServiceBackend struct {
	Name string             `json:"name" protobuf:"bytes,1,opt,name=name"`
	Port ServiceBackendPort `json:"port,omitempty" protobuf:"bytes,2,opt,name=port"`
}

// ServiceBackendPort names a Service port by name or number.
type ServiceBackendPort struct {
	Name   string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Number int32  `json:"number,omitempty" protobuf:"varint,2,opt,name=number"`
}

// IngressClass names an ingress controller (cluster-scoped); Ingresses pick it
// with spec.ingressClassName.
type IngressClass struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           IngressClassSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// IngressClassList is a list of IngressClasses.
type IngressClassList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []IngressClass `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// IngressClassSpec names the controller and its configuration.
type IngressClassSpec struct {
	Controller string                           `json:"controller,omitempty" protobuf:"bytes,1,opt,name=controller"`
	Parameters *IngressClassParametersReference `json:"parameters,omitempty" protobuf:"bytes,2,opt,name=parameters"`
}

// Scopes of IngressClass parameters.
const (
	IngressClassParametersReferenceScopeNamespace = "Namespace"
	IngressClassParametersReferenceScopeCluster   = "Cluster"
)

// IngressClassParametersReference points at the controller's configuration
// object.
type IngressClassParametersReference struct {
	APIGroup  *string `json:"apiGroup,omitempty" protobuf:"bytes,1,opt,name=aPIGroup"`
	Kind      string  `json:"kind" protobuf:"bytes,2,opt,name=kind"`
	Name      string  `json:"name" protobuf:"bytes,3,opt,name=name"`
	Scope     *string `json:"scope" protobuf:"bytes,4,opt,name=scope"`
	Namespace *string `json:"namespace,omitempty" protobuf:"bytes,5,opt,name=namespace"`
}

// IPAddress records that one IP address (its name, in canonical form) is
// allocated to an object (cluster-scoped).
type IPAddress struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           IPAddressSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// IPAddressList is a list of IPAddresses.
type IPAddressList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []IPAddress `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// IPAddressSpec names the address's owner.
type IPAddressSpec struct {
	ParentRef *ParentReference `json:"parentRef,omitempty" protobuf:"bytes,1,opt,name=parentRef"`
}

// ParentReference identifies the object an IPAddress belongs to.
type ParentReference struct {
	Group     string `json:"group,omitempty" protobuf:"bytes,1,opt,name=group"`
	Resource  string `json:"resource,omitempty" protobuf:"bytes,2,opt,name=resource"`
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,3,opt,name=namespace"`
	Name      string `json:"name,omitempty" protobuf:"bytes,4,opt,name=name"`
}

// ServiceCIDR is a range (one per IP family) Service cluster IPs come from
// (cluster-scoped). The API server keeps the one named "kubernetes", from its
// --service-cidr.
type ServiceCIDR struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           ServiceCIDRSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status         ServiceCIDRStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ServiceCIDRList is a list of ServiceCIDRs.
type ServiceCIDRList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []ServiceCIDR `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// ServiceCIDRSpec holds at most two CIDRs, one per IP family.
type ServiceCIDRSpec struct {
	CIDRs []string `json:"cidrs,omitempty" protobuf:"bytes,1,rep,name=cidrs"`
}

// ServiceCIDRConditionReady is the condition saying a ServiceCIDR can be
// allocated from.
const ServiceCIDRConditionReady = "Ready"

// ServiceCIDRStatus reports whether the range is in use.
type ServiceCIDRStatus struct {
	Conditions []api.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" protobuf:"bytes,1,rep,name=conditions"`
}
