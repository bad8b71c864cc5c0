// Package v2 is the second version of the corpus' Gadget; Widget v2 is
// skipped.
// +groupName=corpus.converge.dev
// +kubebuilder:validation:Optional
package v2

import "github.com/converge-dev/converge/framework/api"

// Gadget is the storage version.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
type Gadget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`

	Spec   GadgetSpec   `json:"spec"`
	Status GadgetStatus `json:"status"`
}

// GadgetSpec is optional field by field (package marker).
type GadgetSpec struct {
	// Color is still required.
	// +kubebuilder:validation:Required
	Color string `json:"color"`
	// Shade is optional without omitempty.
	Shade string `json:"shade"`
}

// GadgetStatus of a Gadget.
type GadgetStatus struct {
	Ready bool `json:"ready"`
}

// Widget v2 is not served yet.
// +kubebuilder:skipversion
type Widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
}
