package v1

import (
	"reflect"

	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Resources returns the authentication.k8s.io/v1 resources, for discovery:
// tokenreviews and selfsubjectreviews, cluster-scoped, serving only "create",
// which builtin/security answers before the request reaches storage.
func Resources() []*registry.Resource {
	mk := func(resource, kind, singular string, t reflect.Type) *registry.Resource {
		return &registry.Resource{
			GroupVersion: GroupVersion, Resource: resource, Kind: kind, ListKind: kind + "List", Singular: singular,
			Verbs: []string{"create"}, Strategy: registry.Typed[struct{}]{}, Type: t,
		}
	}
	return []*registry.Resource{
		mk("tokenreviews", "TokenReview", "tokenreview", reflect.TypeFor[TokenReview]()),
		mk("selfsubjectreviews", "SelfSubjectReview", "selfsubjectreview", reflect.TypeFor[SelfSubjectReview]()),
	}
}

// AddToScheme registers the kinds in s under authentication.k8s.io/v1.
func AddToScheme(s *scheme.Scheme) error {
	return s.AddKnownTypes(GroupVersion, &TokenRequest{}, &TokenReview{}, &SelfSubjectReview{})
}
