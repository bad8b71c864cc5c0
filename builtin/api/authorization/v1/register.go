package v1

import (
	"reflect"

	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the authorization.k8s.io/v1 resources, for discovery: they
// serve only "create", which builtin/security answers before the request reaches
// storage.
func Resources() []*registry.Resource {
	mk := func(resource, kind, singular string, namespaced bool, t reflect.Type) *registry.Resource {
		return &registry.Resource{
			GroupVersion: GroupVersion, Resource: resource, Kind: kind, ListKind: kind + "List", Singular: singular,
			Namespaced: namespaced, Verbs: []string{"create"}, Strategy: registry.Typed[struct{}]{}, Type: t,
		}
	}
	return []*registry.Resource{
		mk("subjectaccessreviews", "SubjectAccessReview", "subjectaccessreview", false, reflect.TypeFor[SubjectAccessReview]()),
		mk("selfsubjectaccessreviews", "SelfSubjectAccessReview", "selfsubjectaccessreview", false, reflect.TypeFor[SelfSubjectAccessReview]()),
		mk("localsubjectaccessreviews", "LocalSubjectAccessReview", "localsubjectaccessreview", true, reflect.TypeFor[LocalSubjectAccessReview]()),
		mk("selfsubjectrulesreviews", "SelfSubjectRulesReview", "selfsubjectrulesreview", false, reflect.TypeFor[SelfSubjectRulesReview]()),
	}
}

// AddToScheme registers the kinds in s under authorization.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion,
		&SubjectAccessReview{}, &LocalSubjectAccessReview{}, &SelfSubjectAccessReview{}, &SelfSubjectRulesReview{},
	)
}
