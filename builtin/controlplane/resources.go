package controlplane

import (
	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/framework/apiserver/registry"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	eventsv1 "github.com/converge-dev/converge/builtin/api/events/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
)

// BuiltinResources returns every built-in resource the API server serves.
func BuiltinResources() []*registry.Resource {
	var out []*registry.Resource
	for _, group := range [][]*registry.Resource{
		corev1.Resources(), appsv1.Resources(), batchv1.Resources(), coordinationv1.Resources(), discoveryv1.Resources(),
		eventsv1.Resources(), policyv1.Resources(),
		schedulingv1.Resources(), rbacv1.Resources(), authorizationv1.Resources(), admissionregistrationv1.Resources(),
	} {
		out = append(out, group...)
	}
	return out
}
