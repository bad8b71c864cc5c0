package quota

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// storageClassSuffix joins a storage class name and a resource in a
// per-class quota name (gold.storageclass.storage.k8s.io/requests.storage).
const storageClassSuffix = ".storageclass.storage.k8s.io/"

// ResourceByStorageClass is the per-class quota name of resource.
func ResourceByStorageClass(class, resource string) string {
	return class + storageClassSuffix + resource
}

var pvcResources = []string{"count/persistentvolumeclaims", string(corev1.ResourcePersistentVolumeClaims),
	string(corev1.ResourceRequestsStorage)}

// pvcEvaluator charges persistent volume claims: the object and its storage
// request, in total and per storage class.
type pvcEvaluator struct{}

func (pvcEvaluator) GroupResource() api.GroupResource {
	return api.GroupResource{Resource: "persistentvolumeclaims"}
}

// Handles: creates and updates (a resize requests more storage).
func (pvcEvaluator) Handles(op admission.Operation, subresource string, _, _ map[string]any) bool {
	return subresource == "" && (op == admission.Create || op == admission.Update)
}

func (pvcEvaluator) MatchingResources(names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(pvcResources, n) {
			out = append(out, n)
			continue
		}
		if _, res, ok := strings.Cut(n, storageClassSuffix); ok &&
			(res == string(corev1.ResourcePersistentVolumeClaims) || res == string(corev1.ResourceRequestsStorage)) {
			out = append(out, n)
		}
	}
	return out
}

// MatchesScope: VolumeAttributesClass selects claims by
// spec.volumeAttributesClassName (or the class currently applied).
func (pvcEvaluator) MatchesScope(req corev1.ScopedResourceSelectorRequirement, obj map[string]any) (bool, error) {
	if req.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	c, err := registry.FromMap[corev1.PersistentVolumeClaim](obj)
	if err != nil {
		return false, fmt.Errorf("decode persistentvolumeclaim: %w", err)
	}
	class := ""
	if c.Spec.VolumeAttributesClassName != nil {
		class = *c.Spec.VolumeAttributesClassName
	}
	if matchValues(req, class) {
		return true, nil
	}
	if cur := c.Status.CurrentVolumeAttributesClassName; cur != nil && *cur != class {
		return matchValues(req, *cur), nil
	}
	return false, nil
}

func (pvcEvaluator) Usage(obj map[string]any, _ time.Time) (corev1.ResourceList, error) {
	c, err := registry.FromMap[corev1.PersistentVolumeClaim](obj)
	if err != nil {
		return nil, fmt.Errorf("decode persistentvolumeclaim: %w", err)
	}
	out := corev1.ResourceList{"count/persistentvolumeclaims": one, string(corev1.ResourcePersistentVolumeClaims): one}
	class := corev1.PersistentVolumeClaimClass(c)
	if class != "" {
		out[ResourceByStorageClass(class, string(corev1.ResourcePersistentVolumeClaims))] = one
	}
	storage := string(corev1.ResourceStorage)
	req, ok := c.Spec.Resources.Requests[storage]
	if alloc, found := c.Status.AllocatedResources[storage]; found && (!ok || alloc.Cmp(req) > 0) {
		req, ok = alloc, true
	}
	if ok {
		out[string(corev1.ResourceRequestsStorage)] = req
		if class != "" {
			out[ResourceByStorageClass(class, string(corev1.ResourceRequestsStorage))] = req
		}
	}
	return out, nil
}

func (pvcEvaluator) Constraints([]string, map[string]any) error { return nil }
