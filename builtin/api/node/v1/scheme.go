package v1

import "github.com/converge-dev/converge/framework/scheme"

// AddToScheme registers RuntimeClass and RuntimeClassList in s under
// node.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &RuntimeClass{}, &RuntimeClassList{})
}
