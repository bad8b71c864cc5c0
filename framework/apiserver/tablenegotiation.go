package apiserver

import (
	"net/http"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// notTransformableMessage is Kubernetes' 406 message for a request whose
// Accept header names only representations the resource cannot produce.
const notTransformableMessage = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"

// withTableNegotiation answers 406 NotAcceptable, as Kubernetes does, when a
// client accepts only transformed representations (as=Table,
// as=PartialObjectMetadata) from a resource that has no metadata to render: a
// create-only resource, whose objects are answers computed from the request
// (access and token reviews), never stored (Kubernetes: a storage without a
// TableConvertor). An Accept header that also allows a plain media type
// (application/json, */*, ...) gets the plain object.
func (s *Server) withTableNegotiation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if accept := r.Header.Get("Accept"); !strings.Contains(accept, "as=") || !onlyTransformed(accept) {
			next.ServeHTTP(w, r)
			return
		}
		ri, ok := filters.RequestInfoFrom(r.Context())
		if !ok {
			ri = filters.NewRequestInfo(r)
		}
		if !ri.IsResourceRequest || ri.Subresource != "" {
			next.ServeHTTP(w, r)
			return
		}
		res := s.opts.Registry.Get(api.GroupVersionResource{Group: ri.APIGroup, Version: ri.APIVersion, Resource: ri.Resource})
		if res == nil || len(res.Verbs) == 0 || slices.Contains(res.Verbs, "get") || slices.Contains(res.Verbs, "list") {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, apierrors.NewNotAcceptable(notTransformableMessage))
	})
}

// onlyTransformed reports whether every media range of an Accept header asks
// for a transformed representation (has an "as" parameter).
func onlyTransformed(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		transformed := false
		for _, param := range strings.Split(part, ";")[1:] {
			k, _, _ := strings.Cut(param, "=")
			if strings.TrimSpace(k) == "as" {
				transformed = true
			}
		}
		if !transformed {
			return false
		}
	}
	return true
}
