package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers every top-level kind of this package, and its list type,
// in s under discovery.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&EndpointSlice{},
		&EndpointSliceList{},
	)
}
