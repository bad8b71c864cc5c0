package v1

import "github.com/converge-dev/converge/framework/api"

// GroupVersion is coordination.k8s.io/v1.
var GroupVersion = api.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}

// CoordinatedLeaseStrategy names how a coordinated leader election picks a holder.
type CoordinatedLeaseStrategy string

// Coordinated lease strategies.
const (
	OldestEmulationVersion CoordinatedLeaseStrategy = "OldestEmulationVersion"
)

// Lease is a lease held by one holder at a time (leader election, node heartbeats).
type Lease struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           LeaseSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// LeaseSpec is the state of a Lease.
type LeaseSpec struct {
	HolderIdentity       *string                   `json:"holderIdentity,omitempty" protobuf:"bytes,1,opt,name=holderIdentity"`
	LeaseDurationSeconds *int32                    `json:"leaseDurationSeconds,omitempty" protobuf:"varint,2,opt,name=leaseDurationSeconds"`
	AcquireTime          *api.MicroTime            `json:"acquireTime,omitempty" protobuf:"bytes,3,opt,name=acquireTime"`
	RenewTime            *api.MicroTime            `json:"renewTime,omitempty" protobuf:"bytes,4,opt,name=renewTime"`
	LeaseTransitions     *int32                    `json:"leaseTransitions,omitempty" protobuf:"varint,5,opt,name=leaseTransitions"`
	Strategy             *CoordinatedLeaseStrategy `json:"strategy,omitempty" protobuf:"bytes,6,opt,name=strategy"`
	PreferredHolder      *string                   `json:"preferredHolder,omitempty" protobuf:"bytes,7,opt,name=preferredHolder"`
}

// LeaseList is a list of Leases.
type LeaseList struct {
	api.TypeMeta `json:",inline"`
	api.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Items        []Lease `json:"items" protobuf:"bytes,2,rep,name=items"`
}
