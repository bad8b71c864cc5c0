package controlplane

import (
	"fmt"
	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
	"maps"

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

// servedResources is BuiltinResources with the parts that need the store:
// Service cluster IP and node port allocation (alloc) and pods/log.
func servedResources(store storage.Interface, alloc *servicenet.Allocator) ([]*registry.Resource, error) {
	logs, err := podlog.New(podlog.Options{NodeAddress: podlog.NodeAddressFromStore(store)})
	if err != nil {
		return nil, fmt.Errorf("pods/log: %w", err)
	}
	out := BuiltinResources()
	for _, r := range out {
		switch r.GroupVersionResource() {
		case corev1.GroupVersion().WithResource("services"):
			servicenet.WrapServiceResource(r, alloc)
		case corev1.GroupVersion().WithResource("pods"):
			subs := maps.Clone(r.Subresources)
			if subs == nil {
				subs = map[string]registry.Subresource{}
			}
			subs["log"] = logs
			r.Subresources = subs
		}
	}
	return out, nil
}
