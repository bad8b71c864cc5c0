package v1

import (
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// GroupVersion is discovery.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}

// Well-known EndpointSlice labels.
const (
	LabelServiceName = "kubernetes.io/service-name"
	LabelManagedBy   = "endpointslice.kubernetes.io/managed-by"
	LabelSkipMirror  = "endpointslice.kubernetes.io/skip-mirror"
)

// EndpointSlice is a subset of the endpoints of a Service.
type EndpointSlice struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	AddressType    AddressType    `json:"addressType" protobuf:"bytes,4,rep,name=addressType"`
	Endpoints      []Endpoint     `json:"endpoints" protobuf:"bytes,2,rep,name=endpoints"`
	Ports          []EndpointPort `json:"ports" protobuf:"bytes,3,rep,name=ports"`
}

// AddressType is the kind of address an EndpointSlice carries.
type AddressType string

// Address types.
const (
	AddressTypeIPv4 AddressType = "IPv4"
	AddressTypeIPv6 AddressType = "IPv6"
	AddressTypeFQDN AddressType = "FQDN"
)

// Endpoint is one backend of a Service.
type Endpoint struct {
	Addresses          []string                `json:"addresses" protobuf:"bytes,1,rep,name=addresses"`
	Conditions         EndpointConditions      `json:"conditions,omitempty" protobuf:"bytes,2,opt,name=conditions"`
	Hostname           *string                 `json:"hostname,omitempty" protobuf:"bytes,3,opt,name=hostname"`
	TargetRef          *corev1.ObjectReference `json:"targetRef,omitempty" protobuf:"bytes,4,opt,name=targetRef"`
	DeprecatedTopology map[string]string       `json:"deprecatedTopology,omitempty" protobuf:"bytes,5,opt,name=deprecatedTopology" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	NodeName           *string                 `json:"nodeName,omitempty" protobuf:"bytes,6,opt,name=nodeName"`
	Zone               *string                 `json:"zone,omitempty" protobuf:"bytes,7,opt,name=zone"`
	Hints              *EndpointHints          `json:"hints,omitempty" protobuf:"bytes,8,opt,name=hints"`
}

// EndpointConditions is the state of an endpoint.
type EndpointConditions struct {
	Ready       *bool `json:"ready,omitempty" protobuf:"bytes,1,name=ready"`
	Serving     *bool `json:"serving,omitempty" protobuf:"bytes,2,name=serving"`
	Terminating *bool `json:"terminating,omitempty" protobuf:"bytes,3,name=terminating"`
}

// EndpointHints are topology hints for consumers.
type EndpointHints struct {
	ForZones []ForZone `json:"forZones,omitempty" protobuf:"bytes,1,name=forZones"`
	ForNodes []ForNode `json:"forNodes,omitempty" protobuf:"bytes,2,name=forNodes"`
}

// ForZone names a zone an endpoint should serve.
type ForZone struct {
	Name string `json:"name" protobuf:"bytes,1,name=name"`
}

// ForNode names a node an endpoint should serve.
type ForNode struct {
	Name string `json:"name" protobuf:"bytes,1,name=name"`
}

// EndpointPort is a port served by the endpoints of a slice.
type EndpointPort struct {
	Name        *string          `json:"name,omitempty" protobuf:"bytes,1,name=name"`
	Protocol    *corev1.Protocol `json:"protocol,omitempty" protobuf:"bytes,2,name=protocol"`
	Port        *int32           `json:"port,omitempty" protobuf:"bytes,3,opt,name=port"`
	AppProtocol *string          `json:"appProtocol,omitempty" protobuf:"bytes,4,name=appProtocol"`
}

// EndpointSliceList is a list of EndpointSlices.
type EndpointSliceList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []EndpointSlice `json:"items" protobuf:"bytes,2,rep,name=items"`
}
