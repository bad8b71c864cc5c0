package leaderelection

import "github.com/converge-dev/converge/framework/api"

// lease is the part of a coordination.k8s.io/v1 Lease the election uses. It
// carries its TypeMeta, so no scheme registration is needed (framework code
// must not import the built-in types).
type lease struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           leaseSpec `json:"spec,omitempty"`
}

type leaseSpec struct {
	HolderIdentity       *string        `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32         `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *api.MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *api.MicroTime `json:"renewTime,omitempty"`
	LeaseTransitions     *int32         `json:"leaseTransitions,omitempty"`
}

func newLease(namespace, name string) *lease {
	return &lease{
		TypeMeta:   api.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: api.ObjectMeta{Namespace: namespace, Name: name},
	}
}
