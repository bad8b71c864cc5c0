package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers PriorityClass and PriorityClassList in s under
// scheduling.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&PriorityClass{},
		&PriorityClassList{},
	)
}
