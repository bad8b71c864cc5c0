// Package all registers every built-in kind (core, apps, batch, autoscaling,
// coordination.k8s.io, discovery.k8s.io, events.k8s.io and policy, all v1) in a
// scheme.Scheme.
package all

import (
	"errors"
	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	authenticationv1 "github.com/converge-dev/converge/builtin/api/authentication/v1"
	authorizationv1 "github.com/converge-dev/converge/builtin/api/authorization/v1"
	certificatesv1 "github.com/converge-dev/converge/builtin/api/certificates/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	autoscalingv1 "github.com/converge-dev/converge/builtin/api/autoscaling/v1"
	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	eventsv1 "github.com/converge-dev/converge/builtin/api/events/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	schedulingv1 "github.com/converge-dev/converge/builtin/api/scheduling/v1"
	"github.com/converge-dev/converge/framework/scheme"
)

// adders lists each built-in group's AddToScheme.
var adders = []func(*scheme.Scheme) error{
	corev1.AddToScheme,
	appsv1.AddToScheme,
	autoscalingv1.AddToScheme,
	batchv1.AddToScheme,
	coordinationv1.AddToScheme,
	discoveryv1.AddToScheme,
	eventsv1.AddToScheme,
	policyv1.AddToScheme,
	schedulingv1.AddToScheme,
	rbacv1.AddToScheme,
	authorizationv1.AddToScheme,
	authenticationv1.AddToScheme,
	admissionregistrationv1.AddToScheme,
	certificatesv1.AddToScheme,
}

// AddToScheme registers every built-in kind and list kind in s. It calls every
// group's AddToScheme and returns their errors joined (nil if none).
func AddToScheme(s *scheme.Scheme) error {
	var errs []error
	for _, add := range adders {
		errs = append(errs, add(s))
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
