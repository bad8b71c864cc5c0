package garbagecollector

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// ownerState classifies one ownerReference after a live read of the owner.
type ownerState int

const (
	ownerSolid    ownerState = iota // exists and is not waiting for its dependents
	ownerDangling                   // absent, or another object under the same name
	ownerWaiting                    // being deleted in the foreground
)

// reconcileOwners collects n when none of its owners exists any more, and
// otherwise drops references to absent owners and unblocks owners waiting in
// the foreground.
func (r *reconciler) reconcileOwners(ctx context.Context, n *node) error {
	var solid, dangling, waiting []string
	for _, ref := range n.Owners {
		st, err := r.ownerState(ctx, n, ref)
		if err != nil {
			return err
		}
		switch st {
		case ownerSolid:
			solid = append(solid, ref.UID)
		case ownerDangling:
			dangling = append(dangling, ref.UID)
		case ownerWaiting:
			waiting = append(waiting, ref.UID)
		}
	}
	if len(solid) > 0 {
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		return r.fixOwnerRefs(ctx, n, dangling, waiting)
	}
	// No owner is left: the object goes. If an owner waits for it in the
	// foreground and it has dependents itself, it goes in the foreground too.
	policy := api.DeletePropagationBackground
	if len(waiting) > 0 && len(r.graph.dependentsOf(n.UID)) > 0 {
		policy = api.DeletePropagationForeground
	}
	logr.FromContextOrDiscard(ctx).Info("Deleting object whose owners are gone",
		"object", n.Kind+" "+key(n), "uid", n.UID, "propagationPolicy", policy)
	err := r.delete(ctx, n.object(), policy)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or replaced by another object of that name
	}
	if err != nil {
		r.event(ctx, n.object(), "Warning", reasonFailedDelete,
			fmt.Sprintf("garbage collector failed to delete %s whose owners are gone: %v", n.Kind, err))
		return fmt.Errorf("delete %s %s: %w", n.Kind, key(n), err)
	}
	return nil
}

// ownerState reads the owner named by ref live: the graph may lag, and an
// object is never collected on the cache's word alone.
func (r *reconciler) ownerState(ctx context.Context, n *node, ref api.OwnerReference) (ownerState, error) {
	gv, err := api.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		r.event(ctx, n.object(), "Warning", reasonOwnerRefUnresolvable,
			fmt.Sprintf("ownerRef [%s/%s, name: %s, uid: %s] has an invalid apiVersion", ref.APIVersion, ref.Kind, ref.Name, ref.UID))
		return 0, fmt.Errorf("owner of %s: %w", key(n), err)
	}
	gvk := gv.WithKind(ref.Kind)
	namespaced, err := r.namespaced(ctx, gvk)
	if err != nil {
		r.event(ctx, n.object(), "Warning", reasonOwnerRefUnresolvable,
			fmt.Sprintf("ownerRef [%s/%s, name: %s, uid: %s] cannot be resolved: %v", ref.APIVersion, ref.Kind, ref.Name, ref.UID, err))
		return 0, fmt.Errorf("owner of %s: %w", key(n), err)
	}
	ns := ""
	if namespaced {
		if n.Namespace == "" {
			// A cluster-scoped object cannot be owned by a namespaced one.
			r.event(ctx, n.object(), "Warning", reasonOwnerRefInvalidNamespace,
				fmt.Sprintf("ownerRef [%s/%s, namespace: , name: %s, uid: %s] does not exist in namespace %q",
					ref.APIVersion, ref.Kind, ref.Name, ref.UID, ""))
			return ownerDangling, nil
		}
		ns = n.Namespace
	}
	owner := &api.Unstructured{Object: map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind, "metadata": map[string]any{}}}
	owner.SetName(ref.Name)
	owner.SetNamespace(ns)
	err = r.get(ctx, owner)
	if apierrors.IsNotFound(err) {
		return ownerDangling, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get owner %s %s of %s: %w", ref.Kind, ref.Name, key(n), err)
	}
	if owner.GetUID() != ref.UID {
		return ownerDangling, nil
	}
	if owner.GetDeletionTimestamp() != nil && slices.Contains(owner.GetFinalizers(), api.FinalizerDeleteDependents) {
		return ownerWaiting, nil
	}
	return ownerSolid, nil
}

// fixOwnerRefs removes the references to dangling owners from the live object
// and clears blockOwnerDeletion on those to waiting owners.
func (r *reconciler) fixOwnerRefs(ctx context.Context, n *node, dangling, waiting []string) error {
	obj := n.object()
	if err := r.get(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get %s %s: %w", n.Kind, key(n), err)
	}
	if obj.GetUID() != n.UID {
		return nil
	}
	var refs []api.OwnerReference
	changed := false
	for _, ref := range obj.GetOwnerReferences() {
		switch {
		case slices.Contains(dangling, ref.UID):
			changed = true
			continue
		case slices.Contains(waiting, ref.UID) && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion:
			ref.BlockOwnerDeletion = api.Ptr(false)
			changed = true
		}
		refs = append(refs, ref)
	}
	if !changed {
		return nil
	}
	obj.SetOwnerReferences(refs)
	if err := r.update(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			r.event(ctx, obj, "Warning", reasonFailedUpdateOwnerRefs,
				fmt.Sprintf("garbage collector failed to update ownerReferences: %v", err))
		}
		return fmt.Errorf("update ownerReferences of %s %s: %w", n.Kind, key(n), err)
	}
	return nil
}

func key(n *node) string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}
