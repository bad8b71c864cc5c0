package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers every top-level kind of this package, and its list type,
// in s under policy/v1. Eviction has no list type: it is only the body
// POSTed to pods/{name}/eviction.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&PodDisruptionBudget{},
		&PodDisruptionBudgetList{},
		&Eviction{},
	)
}
