package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	storagev1 "github.com/converge-dev/converge/builtin/api/storage/v1"
	"github.com/converge-dev/converge/builtin/defaultstorageclass"
	"github.com/converge-dev/converge/builtin/limitrange"
	"github.com/converge-dev/converge/builtin/quota"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// quotaAdmission wraps the admission plugins of either mode with Kubernetes'
// LimitRanger (first among the mutating and validating plugins) and
// DefaultStorageClass (after it), and ResourceQuota (last among the
// validating ones, after the webhooks, so that it charges only requests every
// other plugin admitted).
func (cp *ControlPlane) quotaAdmission(mutating []admission.Mutator, validating []admission.Validator) ([]admission.Mutator, []admission.Validator) {
	store := quota.NewServerStore(func() quota.Server {
		if cp.server == nil {
			return nil
		}
		return cp.server
	})
	lr := limitrange.New(cp.cachedLimitRanges)
	mutating = append([]admission.Mutator{lr, defaultstorageclass.New(cp.cachedStorageClasses)}, mutating...)
	validating = append([]admission.Validator{lr}, validating...)
	return mutating, append(validating, quota.NewAdmission(store))
}

// cachedLimitRanges lists a namespace's LimitRanges from the watch cache.
func (cp *ControlPlane) cachedLimitRanges(ctx context.Context, namespace string) ([]*corev1.LimitRange, error) {
	items, err := cachedList[corev1.LimitRange](ctx, cp, api.GroupVersionResource{Version: "v1", Resource: "limitranges"}, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.LimitRange, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out, nil
}

// cachedStorageClasses lists the StorageClasses from the watch cache.
func (cp *ControlPlane) cachedStorageClasses(ctx context.Context) ([]storagev1.StorageClass, error) {
	return cachedList[storagev1.StorageClass](ctx, cp, api.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, "")
}

// cachedList decodes the objects of gvr in namespace ("" for all) held by
// the API server's watch cache.
func cachedList[T any](ctx context.Context, cp *ControlPlane, gvr api.GroupVersionResource, namespace string) ([]T, error) {
	if cp.server == nil {
		return nil, errors.New("controlplane: the API server is not created yet")
	}
	items, _, err := cp.server.CachedObjects(ctx, gvr, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(items))
	for i, raw := range items {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("decode %s: %w", gvr.Resource, err)
		}
	}
	return out, nil
}
