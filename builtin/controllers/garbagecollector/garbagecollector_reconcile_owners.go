package garbagecollector

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// ownerState classifies one ownerReference after a live read of the owner.
type ownerState int

const (
	ownerSolid    ownerState = iota // exists and is not waiting for its dependents
	ownerDangling                   // absent, or another object under the same name
	ownerWaiting                    // being deleted in the foreground
)

// maxDeleteAttempts bounds how often one reconcile re-reads an object whose
// deletion lost a race (its resourceVersion changed since it was read).
const maxDeleteAttempts = 3

// reconcileOwners is Kubernetes' attemptToDeleteItem: it collects n when none
// of its owners exists any more, and otherwise drops references to absent
// owners and unblocks owners waiting in the foreground. It decides on the live
// object (a quorum read), never on the graph, which may lag: a client may have
// removed the ownerReferences, or the collector itself orphaned the object,
// after the graph last saw it.
func (r *reconciler) reconcileOwners(ctx context.Context, n *node) error {
	for range maxDeleteAttempts {
		err := r.attemptToDelete(ctx, n)
		if !apierrors.IsConflict(err) {
			return err
		}
		// Modified (or replaced) since it was read: decide again.
	}
	return fmt.Errorf("delete %s %s: changed while being collected; retrying", n.Kind, key(n))
}

// attemptToDelete is one decision on the live object of n. It returns a
// Conflict error when the object changed between the read and the delete.
func (r *reconciler) attemptToDelete(ctx context.Context, n *node) error {
	obj := n.object()
	if err := r.objects.Get(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // gone; the graph will hear of it
		}
		return fmt.Errorf("get %s %s: %w", n.Kind, key(n), err)
	}
	if obj.GetUID() != n.UID {
		return nil // another object under the same name; the graph will hear of it
	}
	if obj.GetDeletionTimestamp() != nil && !slices.Contains(obj.GetFinalizers(), api.FinalizerDeleteDependents) {
		return nil // already being deleted
	}
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return nil // no longer a dependent of anything
	}
	var solid, dangling, waiting []string
	for _, ref := range refs {
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
		return r.fixOwnerRefs(ctx, obj, dangling, waiting)
	}
	// No owner is left: the object goes. If an owner waits for it in the
	// foreground and it has dependents itself, it goes in the foreground too;
	// otherwise as its own finalizers ask, else in the background.
	policy := api.DeletePropagationBackground
	deps := r.graph.dependentsOf(n.UID)
	switch {
	case len(waiting) > 0 && len(deps) > 0:
		policy = api.DeletePropagationForeground
		if slices.ContainsFunc(deps, (*node).waitingForDependents) {
			// A dependent waits for its own dependents too: an ownership
			// cycle may close here (the waiting owner waits for this object,
			// which would wait for that dependent, which may wait for the
			// owner). As Kubernetes does, the references to the waiting owners
			// stop blocking before this object goes in the foreground, so the
			// owners finish and the cycle unwinds.
			if err := r.fixOwnerRefs(ctx, obj, nil, waiting); err != nil {
				return err
			}
		}
	case slices.Contains(obj.GetFinalizers(), api.FinalizerOrphanDependents):
		policy = api.DeletePropagationOrphan
	case slices.Contains(obj.GetFinalizers(), api.FinalizerDeleteDependents):
		policy = api.DeletePropagationForeground
	}
	logr.FromContextOrDiscard(ctx).Info("Deleting object whose owners are gone",
		"object", n.Kind+" "+key(n), "uid", n.UID, "propagationPolicy", policy)
	// obj carries the uid and resourceVersion that were judged: a dependent
	// replaced or changed since (its ownerReferences, say) is not deleted.
	err := r.objects.Delete(ctx, obj, policy)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if apierrors.IsConflict(err) {
		return err
	}
	if err != nil {
		r.recorder.Event(ctx, obj, "Warning", reasonFailedDelete,
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
		r.recorder.Event(ctx, n.object(), "Warning", reasonOwnerRefUnresolvable,
			fmt.Sprintf("ownerRef [%s/%s, name: %s, uid: %s] has an invalid apiVersion", ref.APIVersion, ref.Kind, ref.Name, ref.UID))
		return 0, fmt.Errorf("owner of %s: %w", key(n), err)
	}
	gvk := gv.WithKind(ref.Kind)
	namespaced, err := r.objects.Namespaced(ctx, gvk)
	if err != nil {
		r.recorder.Event(ctx, n.object(), "Warning", reasonOwnerRefUnresolvable,
			fmt.Sprintf("ownerRef [%s/%s, name: %s, uid: %s] cannot be resolved: %v", ref.APIVersion, ref.Kind, ref.Name, ref.UID, err))
		return 0, fmt.Errorf("owner of %s: %w", key(n), err)
	}
	ns := ""
	if namespaced {
		if n.Namespace == "" {
			// A cluster-scoped object cannot be owned by a namespaced one.
			r.recorder.Event(ctx, n.object(), "Warning", reasonOwnerRefInvalidNamespace,
				fmt.Sprintf("ownerRef [%s/%s, namespace: , name: %s, uid: %s] does not exist in namespace %q",
					ref.APIVersion, ref.Kind, ref.Name, ref.UID, ""))
			return ownerDangling, nil
		}
		ns = n.Namespace
	}
	owner := &api.Unstructured{Object: map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind, "metadata": map[string]any{}}}
	owner.SetName(ref.Name)
	owner.SetNamespace(ns)
	err = r.objects.Get(ctx, owner)
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
// obj and clears blockOwnerDeletion on those to waiting owners. The update is
// conditioned on obj's resourceVersion.
func (r *reconciler) fixOwnerRefs(ctx context.Context, obj *api.Unstructured, dangling, waiting []string) error {
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
	if err := r.objects.Update(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsConflict(err) {
			return err // changed since it was read: decide again
		}
		r.recorder.Event(ctx, obj, "Warning", reasonFailedUpdateOwnerRefs,
			fmt.Sprintf("garbage collector failed to update ownerReferences: %v", err))
		return fmt.Errorf("update ownerReferences of %s %s: %w", obj.GroupVersionKind().Kind, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

func key(n *node) string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}
