// Package all is the one list of built-in API groups: each group's scheme
// registration and the resources the API server serves for it. The scheme
// (NewScheme, AddToScheme) and the served resources (Resources) both come from
// Groups, so a group added here is known to clients and served at once.
package all

import (
	"errors"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	apiregistrationv1 "github.com/converge-dev/converge/builtin/api/apiregistration/v1"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	autoscalingv1 "github.com/converge-dev/converge/builtin/api/autoscaling/v1"
	autoscalingv2 "github.com/converge-dev/converge/builtin/api/autoscaling/v2"
	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	eventsv1 "github.com/converge-dev/converge/builtin/api/events/v1"
	flowcontrolv1 "github.com/converge-dev/converge/builtin/api/flowcontrol/v1"
	metricsv1beta1 "github.com/converge-dev/converge/builtin/api/metrics/v1beta1"
	networkingv1 "github.com/converge-dev/converge/builtin/api/networking/v1"
	nodev1 "github.com/converge-dev/converge/builtin/api/node/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/scheme"
)

// Group is one built-in group version.
type Group struct {
	// Name is the group version ("v1" for core, "apps/v1", ...).
	Name string
	// AddToScheme registers the group's kinds and list kinds.
	AddToScheme func(*scheme.Scheme) error
	// Resources are the resources the API server serves for the group; nil for
	// groups whose kinds are only request bodies handled elsewhere
	// (autoscaling/v1's Scale by each resource's scale subresource); autoscaling/v1
	// serves horizontalpodautoscalers in v1 and v2 (stored as v2).
	Resources func() []*registry.Resource
}

// Groups returns every built-in group version, core first.
func Groups() []Group {
	return []Group{
		{"v1", corev1.AddToScheme, corev1.Resources},
		{"apps/v1", appsv1.AddToScheme, appsv1.Resources},
		{"autoscaling/v1", autoscalingv1.AddToScheme, autoscalingv1.Resources},
		{"autoscaling/v2", autoscalingv2.AddToScheme, nil},
		{"batch/v1", batchv1.AddToScheme, batchv1.Resources},
		{"coordination.k8s.io/v1", coordinationv1.AddToScheme, coordinationv1.Resources},
		{"discovery.k8s.io/v1", discoveryv1.AddToScheme, discoveryv1.Resources},
		{"events.k8s.io/v1", eventsv1.AddToScheme, eventsv1.Resources},
		{"policy/v1", policyv1.AddToScheme, policyv1.Resources},
		{"scheduling.k8s.io/v1", schedulingv1.AddToScheme, schedulingv1.Resources},
		{"rbac.authorization.k8s.io/v1", rbacv1.AddToScheme, rbacv1.Resources},
		{"authorization.k8s.io/v1", authorizationv1.AddToScheme, authorizationv1.Resources},
		{"authentication.k8s.io/v1", authenticationv1.AddToScheme, authenticationv1.Resources},
		{"admissionregistration.k8s.io/v1", admissionregistrationv1.AddToScheme, admissionregistrationv1.Resources},
		{"certificates.k8s.io/v1", certificatesv1.AddToScheme, certificatesv1.Resources},
		{"node.k8s.io/v1", nodev1.AddToScheme, nodev1.Resources},
		{"networking.k8s.io/v1", networkingv1.AddToScheme, networkingv1.Resources},
		{"storage.k8s.io/v1", storagev1.AddToScheme, storagev1.Resources},
		{"flowcontrol.apiserver.k8s.io/v1", flowcontrolv1.AddToScheme, flowcontrolv1.Resources},
		{"apiregistration.k8s.io/v1", apiregistrationv1.AddToScheme, apiregistrationv1.Resources},
		{"metrics.k8s.io/v1beta1", metricsv1beta1.AddToScheme, metricsv1beta1.Resources},
	}
}

// Resources returns a new copy of every resource the built-in groups serve, in
// the order of Groups. Callers may wire subresources and strategies into the
// copies.
func Resources() []*registry.Resource {
	var out []*registry.Resource
	for _, g := range Groups() {
		if g.Resources != nil {
			out = append(out, g.Resources()...)
		}
	}
	return out
}

// AddToScheme registers every built-in kind and list kind in s. It calls every
// group's AddToScheme and returns their errors joined (nil if none).
func AddToScheme(s *scheme.Scheme) error {
	var errs []error
	for _, g := range Groups() {
		errs = append(errs, g.AddToScheme(s))
	}
	return errors.Join(errs...)
}

// NewScheme returns a new Scheme holding every built-in kind. An error means two
// registrations conflict, which is a programming error in the built-in packages.
func NewScheme() (*scheme.Scheme, error) {
	s := scheme.New()
	if err := AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
