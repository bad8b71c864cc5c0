package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers the kinds in s under authentication.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &TokenRequest{}, &TokenReview{})
}
