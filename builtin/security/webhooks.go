package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/builtin/security/rbac"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// WebhookAdmission returns the admission plugins that call the webhooks of the
// stored Mutating- and ValidatingWebhookConfigurations, read through list (the
// API server's watch cache), with namespaceSelector labels read the same way.
// Secure control planes put them in their chain; insecure ones use them alone.
func WebhookAdmission(list rbac.Lister, equivalents func(api.GroupVersionResource) []admission.EquivalentResource,
	warn func(ctx context.Context, text string)) (mutating, validating *admission.Webhooks) {
	labels := func(ctx context.Context, namespace string) (map[string]string, error) {
		return namespaceLabels(ctx, list, namespace)
	}
	mutating = &admission.Webhooks{Mutating: true, NamespaceLabels: labels, Warn: warn, Equivalents: equivalents,
		Hooks: func(ctx context.Context) ([]admission.Hook, error) {
			cs, err := listConfigurations[admissionregistrationv1.MutatingWebhookConfiguration](ctx, list, "mutatingwebhookconfigurations")
			return admissionregistrationv1.MutatingHooks(cs), err
		}}
	validating = &admission.Webhooks{NamespaceLabels: labels, Warn: warn, Equivalents: equivalents,
		Hooks: func(ctx context.Context) ([]admission.Hook, error) {
			cs, err := listConfigurations[admissionregistrationv1.ValidatingWebhookConfiguration](ctx, list, "validatingwebhookconfigurations")
			return admissionregistrationv1.ValidatingHooks(cs), err
		}}
	return mutating, validating
}

// listConfigurations decodes the stored webhook configurations of resource;
// none when the resource is not served.
func listConfigurations[T any](ctx context.Context, list rbac.Lister, resource string) ([]T, error) {
	items, _, err := list(ctx, admissionregistrationv1.GroupVersion.WithResource(resource), "")
	if errors.Is(err, apiserver.ErrNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeAll[T](items)
}

func namespaceLabels(ctx context.Context, list rbac.Lister, namespace string) (map[string]string, error) {
	items, _, err := list(ctx, api.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "")
	if err != nil {
		return nil, err
	}
	for _, b := range items {
		var ns struct{ Metadata api.ObjectMeta }
		if json.Unmarshal(b, &ns) == nil && ns.Metadata.Name == namespace {
			return ns.Metadata.Labels, nil
		}
	}
	return nil, fmt.Errorf("namespace %q not found", namespace)
}

func decodeAll[T any](items [][]byte) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, b := range items {
		var t T
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
