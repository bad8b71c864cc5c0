// Package v1 owns the built-in core/v1 kinds: Namespace, ConfigMap, Secret,
// ServiceAccount, Event, Pod, PodTemplate, PersistentVolumeClaim, Node, Service,
// Endpoints and Binding.
//
// The Go types have the JSON names, omitempty and pointer choices, protobuf field
// numbers and strategic-merge-patch tags of Kubernetes' k8s.io/api/core/v1, so
// objects written by kubectl and client-go round-trip unchanged apart from
// defaults. The package also holds the defaulting (Default* functions, which
// mirror the Kubernetes API server's defaults and the DefaultTolerationSeconds
// admission plugin), validation (Validate* functions returning field.ErrorList
// with Kubernetes' paths and messages), kubectl's printer columns and the
// registry.Resource of every kind (Resources). Other packages import it as corev1.
package v1
