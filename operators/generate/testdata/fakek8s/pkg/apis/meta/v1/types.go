// Package v1 stands in for k8s.io/apimachinery's metav1 in the generator's
// tests: the known types by name, and a Condition with markers.
package v1

import "time"

// TypeMeta describes an object's kind.
type TypeMeta struct {
	// Kind is the kind.
	Kind string `json:"kind,omitempty"`
	// APIVersion is the version.
	APIVersion string `json:"apiVersion,omitempty"`
}

// ObjectMeta is metadata.
type ObjectMeta struct {
	Name string `json:"name,omitempty"`
}

// Time is a timestamp.
type Time struct {
	time.Time `protobuf:"-"`
}

// MarshalJSON writes RFC 3339.
func (t Time) MarshalJSON() ([]byte, error) { return t.Time.MarshalJSON() }

// Duration is a duration.
type Duration struct {
	time.Duration `protobuf:"-"`
}

// Condition is a status condition.
type Condition struct {
	// type of condition.
	// +required
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type" protobuf:"bytes,1,opt,name=type"`
	// status of the condition.
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status string `json:"status"`
	// lastTransitionTime is when it changed.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=date-time
	LastTransitionTime Time `json:"lastTransitionTime"`
}
