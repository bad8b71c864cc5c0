package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is storage.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "storage.k8s.io", Version: "v1"}

// CSINode holds the CSI drivers of the node of the same name.
type CSINode struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           CSINodeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// CSINodeList is a list of CSINodes.
type CSINodeList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []CSINode `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// CSINodeSpec lists the node's drivers.
type CSINodeSpec struct {
	Drivers []CSINodeDriver `json:"drivers" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,1,rep,name=drivers"`
}

// CSINodeDriver is one CSI driver on the node.
type CSINodeDriver struct {
	Name         string               `json:"name" protobuf:"bytes,1,opt,name=name"`
	NodeID       string               `json:"nodeID" protobuf:"bytes,2,opt,name=nodeID"`
	TopologyKeys []string             `json:"topologyKeys" protobuf:"bytes,3,rep,name=topologyKeys"`
	Allocatable  *VolumeNodeResources `json:"allocatable,omitempty" protobuf:"bytes,4,opt,name=allocatable"`
}

// VolumeNodeResources bounds the volumes of a driver on the node.
type VolumeNodeResources struct {
	Count *int32 `json:"count,omitempty" protobuf:"varint,1,opt,name=count"`
}
