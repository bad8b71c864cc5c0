package controlplane

import (
	"context"
	"errors"

	"github.com/converge-dev/converge/builtin/admissionpolicy"
	"github.com/converge-dev/converge/builtin/admissionpolicy/expr"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// admissionPolicy returns the ValidatingAdmissionPolicy plugin, reading
// policies, bindings, parameters and namespaces from the API server's watch
// cache.
func (cp *ControlPlane) admissionPolicy() *admissionpolicy.Plugin {
	return admissionpolicy.New(admissionpolicy.Options{
		List:        cp.cachedObjects,
		Params:      cp.paramResource,
		Equivalents: cp.equivalentResources,
		Authorizer:  cp.policyAuthorizer,
		Audit:       filters.AddAuditAnnotation,
		Log:         cp.log.WithName("admissionpolicy"),
	})
}

// cachedObjects reads a resource's objects from the API server's watch cache.
func (cp *ControlPlane) cachedObjects(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
	if cp.server == nil {
		return nil, 0, errors.New("controlplane: the API server is not created yet")
	}
	return cp.server.CachedObjects(ctx, gvr, namespace)
}

// paramResource finds the served resource of a policy's paramKind.
func (cp *ControlPlane) paramResource(gv api.GroupVersion, kind string) (api.GroupVersionResource, bool, bool) {
	if cp.registry == nil {
		return api.GroupVersionResource{}, false, false
	}
	for _, r := range cp.registry.All() {
		if r.GroupVersion == gv && r.Kind == kind {
			return r.GroupVersionResource(), r.Namespaced, true
		}
	}
	return api.GroupVersionResource{}, false, false
}

// policyAuthorizer answers the authorizer variable of policies with the
// API server's authorizer; without security every check is allowed, as
// every request is.
func (cp *ControlPlane) policyAuthorizer(ctx context.Context, c expr.Check) (bool, string, error) {
	if cp.security == nil {
		return true, "", nil
	}
	d, reason, err := cp.security.Authorizer().Authorize(ctx, filters.Attributes{
		User: &filters.User{Name: c.User, UID: c.UID, Groups: c.Groups, Extra: c.Extra}, Verb: c.Verb,
		ResourceRequest: c.ResourceRequest, APIGroup: c.Group, Namespace: c.Namespace, Resource: c.Resource,
		Subresource: c.Subresource, Name: c.Name, Path: c.Path,
	})
	return d == filters.DecisionAllow, reason, err
}
