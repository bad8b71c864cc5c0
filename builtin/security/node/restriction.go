package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// restrictedLabelPrefix is the label prefix nodes may not set on themselves
// (labels used to steer workloads to trusted nodes).
const restrictedLabelPrefix = "node-restriction.kubernetes.io/"

// Restriction is the NodeRestriction admission plugin: it limits what node
// agents may do to the objects their authorization lets them write.
type Restriction struct{}

var _ admission.Validator = Restriction{}

// MayReadManagedFields implements admission.ManagedFieldsScoper: the
// plugin reads names, labels and bindings, never managedFields.
func (Restriction) MayReadManagedFields(context.Context, *admission.Attributes) bool { return false }

// Validate implements admission.Validator.
func (Restriction) Validate(_ context.Context, a *admission.Attributes) error {
	node, ok := Identity(a.User)
	if !ok || a.Operation == admission.Connect {
		// Like Kubernetes' plugin, it judges writes only (exec, attach and
		// the proxies are authorization's business).
		return nil
	}
	gr := a.Resource.GroupResource()
	switch {
	case gr.Group == "" && gr.Resource == "pods":
		return admitPod(node, a)
	case gr.Group == "" && gr.Resource == "nodes":
		return admitNode(node, a)
	case gr.Group == "coordination.k8s.io" && gr.Resource == "leases":
		if a.Namespace != LeaseNamespace || a.Name != node {
			return forbidden(a, fmt.Sprintf("node %q can only access its own lease in %s", node, LeaseNamespace))
		}
	}
	return nil
}

func forbidden(a *admission.Attributes, reason string) error {
	return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, fmt.Errorf("%s", reason))
}

func boundTo(obj map[string]any) string { return api.NestedString(obj, "spec", "nodeName") }

func admitPod(node string, a *admission.Attributes) error {
	switch a.Subresource {
	case "", "status", "eviction":
	default:
		return forbidden(a, fmt.Sprintf("node %q may not change pods/%s", node, a.Subresource))
	}
	obj := a.OldObject
	if a.Operation == admission.Create && a.Subresource == "" {
		obj = a.Object
	}
	if obj == nil {
		return forbidden(a, fmt.Sprintf("node %q: no pod to check", node))
	}
	if got := boundTo(obj); got != node {
		return forbidden(a, fmt.Sprintf("node %q can only %s pods bound to it; this pod is bound to %q",
			node, strings.ToLower(string(a.Operation)), got))
	}
	if a.Operation == admission.Update && boundTo(a.Object) != node {
		return forbidden(a, fmt.Sprintf("node %q may not move a pod to another node", node))
	}
	return nil
}

func admitNode(node string, a *admission.Attributes) error {
	name := a.Name
	if a.Object != nil {
		if n := api.NestedString(a.Object, "metadata", "name"); n != "" {
			name = n
		}
	}
	if name != node {
		return forbidden(a, fmt.Sprintf("node %q is not allowed to modify node %q", node, name))
	}
	if a.Object == nil {
		return nil
	}
	newLabels := api.NestedStringMap(a.Object, "metadata", "labels")
	oldLabels := map[string]string{}
	if a.OldObject != nil {
		oldLabels = api.NestedStringMap(a.OldObject, "metadata", "labels")
	}
	for k, v := range newLabels {
		if strings.HasPrefix(k, restrictedLabelPrefix) || strings.Contains(k, "."+restrictedLabelPrefix) {
			if ov, ok := oldLabels[k]; !ok || ov != v {
				return forbidden(a, fmt.Sprintf("node %q is not allowed to set label %q", node, k))
			}
		}
	}
	for k := range oldLabels {
		if _, ok := newLabels[k]; !ok && strings.HasPrefix(k, restrictedLabelPrefix) {
			return forbidden(a, fmt.Sprintf("node %q is not allowed to remove label %q", node, k))
		}
	}
	return nil
}
