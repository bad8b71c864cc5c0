package namespace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// contentTotals counts what is left in a namespace after a deletion pass.
type contentTotals struct {
	// objects counts remaining objects per resource ("configmaps.", "foos.example.com").
	objects map[string]int
	// finalizers counts remaining objects per finalizer name.
	finalizers map[string]int
}

// deleteContent deletes every namespaced object of ns, updates the namespace's
// conditions, and reports whether anything remains.
func (r *reconciler) deleteContent(ctx context.Context, ns *corev1.Namespace) (bool, error) {
	resources, discoveryErr := r.discoverer.Discover(ctx)
	totals := contentTotals{objects: map[string]int{}, finalizers: map[string]int{}}
	var deleteErrs []error
	// Pods go first, and nothing else goes while one remains (Kubernetes'
	// OrderedNamespaceDeletion, default since 1.33): a pod still running
	// keeps the ConfigMaps, Secrets and ServiceAccounts it uses.
	podsLeft := false
	for _, res := range resources {
		if !isPods(res) {
			continue
		}
		if err := r.deleteResource(ctx, res, ns.Name, &totals); err != nil {
			deleteErrs = append(deleteErrs, err)
		}
		if n := totals.objects[res.String()]; n > 0 {
			podsLeft = true
			deleteErrs = append(deleteErrs, fmt.Errorf("%d pods remain in namespace %s; other resources are deleted once they are gone", n, ns.Name))
		}
	}
	for _, res := range resources {
		if podsLeft {
			break
		}
		if !res.Namespaced || isPods(res) {
			continue
		}
		if err := r.deleteResource(ctx, res, ns.Name, &totals); err != nil {
			deleteErrs = append(deleteErrs, err)
		}
	}
	conds := conditions(discoveryErr, deleteErrs, totals)
	if err := r.setConditions(ctx, ns, conds); err != nil {
		return false, err
	}
	if discoveryErr != nil {
		r.recorder.Event(ctx, ns, "Warning", "NamespaceDeletionDiscoveryFailure", conds[0].Message)
		return false, fmt.Errorf("namespace %s: %w", ns.Name, discoveryErr)
	}
	if podsLeft && len(deleteErrs) == 1 {
		// Only waiting for pods to go: their deletion events requeue the
		// namespace; not an error to back off from.
		return true, nil
	}
	if len(deleteErrs) > 0 {
		r.recorder.Event(ctx, ns, "Warning", "NamespaceDeletionContentFailure", conds[1].Message)
		return false, fmt.Errorf("namespace %s: delete content: %w", ns.Name, errors.Join(deleteErrs...))
	}
	return len(totals.objects) > 0, nil
}

// deleteResource deletes the objects of res in namespace ns and adds what
// remains to totals.
func (r *reconciler) deleteResource(ctx context.Context, res resource, ns string, totals *contentTotals) error {
	if slices.Contains(res.Verbs, "deletecollection") {
		err := r.content.DeleteAllOf(ctx, emptyObject(res), client.InNamespace(ns),
			client.PropagationPolicy(api.DeletePropagationBackground))
		if err != nil && !apierrors.IsMethodNotSupported(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete collection %s: %w", res, err)
		}
	}
	l := &api.UnstructuredList{APIVersion: res.GVK().APIVersion(), Kind: res.Kind + "List"}
	err := r.content.List(ctx, l, client.InNamespace(ns))
	items := l.Items
	if apierrors.IsNotFound(err) {
		return nil // the resource went away
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", res, err)
	}
	var errs []error
	for i := range items {
		obj := &items[i]
		if obj.GetDeletionTimestamp() == nil {
			uid := obj.GetUID()
			err := r.content.Delete(ctx, obj, client.PropagationPolicy(api.DeletePropagationBackground), client.Preconditions{UID: &uid})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs = append(errs, fmt.Errorf("delete %s %s: %w", res, obj.GetName(), err))
			}
		}
		totals.objects[res.String()]++
		for _, f := range obj.GetFinalizers() {
			totals.finalizers[f]++
		}
	}
	return errors.Join(errs...)
}

// Condition reasons and messages, as Kubernetes' namespace controller writes them.
const (
	reasonDiscoveryFailed        = "DiscoveryFailed"
	reasonResourcesDiscovered    = "ResourcesDiscovered"
	reasonContentDeletionFailed  = "ContentDeletionFailed"
	reasonContentDeleted         = "ContentDeleted"
	reasonSomeResourcesRemain    = "SomeResourcesRemain"
	reasonContentRemoved         = "ContentRemoved"
	reasonSomeFinalizersRemain   = "SomeFinalizersRemain"
	reasonContentHasNoFinalizers = "ContentHasNoFinalizers"
)

// conditions returns the four deletion conditions, in the order
// DiscoveryFailure, ContentFailure, ContentRemaining, FinalizersRemaining.
func conditions(discoveryErr error, deleteErrs []error, totals contentTotals) []corev1.NamespaceCondition {
	c := func(t corev1.NamespaceConditionType, bad bool, reason, msg string) corev1.NamespaceCondition {
		st := corev1.ConditionStatus("False")
		if bad {
			st = "True"
		}
		return corev1.NamespaceCondition{Type: t, Status: st, Reason: reason, Message: msg}
	}
	out := make([]corev1.NamespaceCondition, 0, 4)
	if discoveryErr != nil {
		out = append(out, c(corev1.NamespaceDeletionDiscoveryFailure, true, reasonDiscoveryFailed,
			fmt.Sprintf("Discovery failed for some groups: %v", discoveryErr)))
	} else {
		out = append(out, c(corev1.NamespaceDeletionDiscoveryFailure, false, reasonResourcesDiscovered, "All resources successfully discovered"))
	}
	if len(deleteErrs) > 0 {
		msgs := make([]string, len(deleteErrs))
		for i, e := range deleteErrs {
			msgs[i] = e.Error()
		}
		out = append(out, c(corev1.NamespaceDeletionContentFailure, true, reasonContentDeletionFailed,
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(deleteErrs), strings.Join(msgs, ", "))))
	} else {
		out = append(out, c(corev1.NamespaceDeletionContentFailure, false, reasonContentDeleted,
			"All content successfully deleted, may be waiting on finalization"))
	}
	if len(totals.objects) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(totals.objects)) {
			parts = append(parts, fmt.Sprintf("%s has %d resource instances", k, totals.objects[k]))
		}
		out = append(out, c(corev1.NamespaceContentRemaining, true, reasonSomeResourcesRemain,
			"Some resources are remaining: "+strings.Join(parts, ", ")))
	} else {
		out = append(out, c(corev1.NamespaceContentRemaining, false, reasonContentRemoved, "All content successfully removed"))
	}
	if len(totals.finalizers) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(totals.finalizers)) {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", k, totals.finalizers[k]))
		}
		out = append(out, c(corev1.NamespaceFinalizersRemaining, true, reasonSomeFinalizersRemain,
			"Some content in the namespace has finalizers remaining: "+strings.Join(parts, ", ")))
	} else {
		out = append(out, c(corev1.NamespaceFinalizersRemaining, false, reasonContentHasNoFinalizers,
			"All content-preserving finalizers finished"))
	}
	return out
}

// setConditions writes conds into ns.status (keeping lastTransitionTime of
// conditions whose status did not change) when anything changed.
func (r *reconciler) setConditions(ctx context.Context, ns *corev1.Namespace, conds []corev1.NamespaceCondition) error {
	changed := false
	now := api.Now()
	for _, want := range conds {
		i := slices.IndexFunc(ns.Status.Conditions, func(c corev1.NamespaceCondition) bool { return c.Type == want.Type })
		if i < 0 {
			want.LastTransitionTime = now
			ns.Status.Conditions = append(ns.Status.Conditions, want)
			changed = true
			continue
		}
		cur := &ns.Status.Conditions[i]
		if cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
			continue
		}
		if cur.Status != want.Status {
			cur.LastTransitionTime = now
		}
		cur.Status, cur.Reason, cur.Message = want.Status, want.Reason, want.Message
		changed = true
	}
	if !changed {
		return nil
	}
	if err := r.client.Status().Update(ctx, ns); err != nil {
		return fmt.Errorf("update conditions of namespace %s: %w", ns.Name, err)
	}
	return nil
}

// isPods reports whether res is core/v1 pods.
func isPods(res resource) bool {
	return res.GVR.Group == "" && res.GVR.Resource == "pods"
}
