package eviction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	policyv1 "github.com/converge-dev/converge/builtin/api/policy/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// budgetPrefix is the storage prefix of PodDisruptionBudgets.
const budgetPrefix = "/registry/policy/poddisruptionbudgets/"

// maxDisruptedPods is how many unconfirmed evictions a budget may hold.
const maxDisruptedPods = 2000

// conflictRetries is how often a budget write lost to a concurrent one is
// tried again.
const conflictRetries = 5

// Store is the part of the API server's storage eviction uses.
type Store interface {
	List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error)
	Update(ctx context.Context, key string, value []byte, expected int64) (int64, error)
}

// Subresource serves pods/eviction.
type Subresource struct {
	Store Store
	// Now returns the time recorded in disruptedPods (default time.Now).
	Now func() time.Time
}

var _ registry.Subresource = Subresource{}

// Verbs implements registry.Subresource.
func (Subresource) Verbs() []string { return []string{"create"} }

// Kind implements registry.Subresource.
func (Subresource) Kind() api.GroupVersionKind {
	return api.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}
}

// Serve implements registry.Subresource.
func (s Subresource) Serve(w http.ResponseWriter, r *http.Request, p registry.Parent) error {
	if r.Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(api.GroupResource{Resource: "pods/eviction"}, r.Method)
	}
	body, err := p.DecodeBody(r, reflect.TypeFor[policyv1.Eviction]())
	if err != nil {
		return err
	}
	ev, err := registry.FromMap[policyv1.Eviction](body)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("decode Eviction: %v", err))
	}
	if ev.Name != p.Name() {
		return apierrors.NewBadRequest(fmt.Sprintf("name in URL does not match name in Eviction object: %s != %s", p.Name(), ev.Name))
	}
	// The delete's options are checked before the budget is spent or the pod
	// marked: a refused eviction writes nothing.
	if ev.DeleteOptions != nil {
		if errs := validation.ValidateDeleteOptions(ev.DeleteOptions); len(errs) > 0 {
			return apierrors.NewInvalid(api.GroupKind{Kind: "DeleteOptions"}, "", errs[:1])
		}
	}
	ctx := r.Context()
	obj, err := p.Get(ctx)
	if err != nil {
		return err
	}
	pod, err := registry.FromMap[corev1.Pod](obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decode pod: %w", err))
	}
	dryRun := ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0
	if !ignoresBudgets(pod) {
		if err := s.spendBudget(ctx, pod, dryRun); err != nil {
			return err
		}
	}
	opts := ev.DeleteOptions
	if !dryRun {
		if opts, err = markDisruption(ctx, p, opts, s.now()); err != nil {
			return err
		}
	}
	if err := p.Delete(ctx, opts); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}` + "\n"))
	return nil
}

// now is the current time (Now, else time.Now).
func (s Subresource) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// ReasonEvictionByEvictionAPI is the reason of the DisruptionTarget condition
// an eviction adds to the pod, as Kubernetes'.
const ReasonEvictionByEvictionAPI = "EvictionByEvictionAPI"

// markDisruption adds the condition DisruptionTarget=True (reason
// EvictionByEvictionAPI) to the pod's status before it is deleted, as
// Kubernetes does, so that a Job's pod failure policy can tell an eviction
// from a failure of the pod. The delete's preconditions are checked against
// the pod first (409); a resourceVersion precondition then moves to the
// version written here, since this write is the eviction's own.
func markDisruption(ctx context.Context, p registry.Parent, opts *api.DeleteOptions, now time.Time) (*api.DeleteOptions, error) {
	var pre *api.Preconditions
	if opts != nil {
		pre = opts.Preconditions
	}
	obj, err := p.Update(ctx, func(obj map[string]any) error {
		if pre != nil && pre.UID != nil && *pre.UID != "" && *pre.UID != api.NestedString(obj, "metadata", "uid") {
			return apierrors.NewConflict(api.GroupResource{Resource: "pods"}, p.Name(), fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s); the object might have been deleted and then recreated", *pre.UID, api.NestedString(obj, "metadata", "uid")))
		}
		if rv := api.NestedString(obj, "metadata", "resourceVersion"); pre != nil && pre.ResourceVersion != nil && *pre.ResourceVersion != "" && *pre.ResourceVersion != rv {
			return apierrors.NewConflict(api.GroupResource{Resource: "pods"}, p.Name(), fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s); the object might have been modified", *pre.ResourceVersion, rv))
		}
		setDisruptionTarget(obj, now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pre == nil || pre.ResourceVersion == nil || *pre.ResourceVersion == "" {
		return opts, nil
	}
	out := *opts
	rv := api.NestedString(obj, "metadata", "resourceVersion")
	out.Preconditions = &api.Preconditions{UID: pre.UID, ResourceVersion: &rv}
	return &out, nil
}

// setDisruptionTarget sets the pod's DisruptionTarget condition to True with
// the eviction's reason and message (the transition time moves only when the
// status changes).
func setDisruptionTarget(obj map[string]any, now time.Time) {
	conds := api.NestedSlice(obj, "status", "conditions")
	ts := now.UTC().Format(time.RFC3339)
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != string(corev1.DisruptionTarget) {
			continue
		}
		if m["status"] != string(corev1.ConditionTrue) {
			m["lastTransitionTime"] = ts
		}
		m["status"], m["reason"], m["message"] = string(corev1.ConditionTrue), ReasonEvictionByEvictionAPI, "Eviction API: evicting"
		return
	}
	conds = append(conds, map[string]any{"type": string(corev1.DisruptionTarget), "status": string(corev1.ConditionTrue),
		"reason": ReasonEvictionByEvictionAPI, "message": "Eviction API: evicting", "lastTransitionTime": ts, "lastProbeTime": nil})
	api.SetNestedField(obj, conds, "status", "conditions")
}

// ignoresBudgets reports whether the pod's deletion disrupts nothing: it is
// already going away, not running yet, or done.
func ignoresBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// spendBudget checks the budget of pod and, unless the pod's eviction is
// free, records the disruption in it.
func (s Subresource) spendBudget(ctx context.Context, pod *corev1.Pod, dryRun bool) error {
	for range conflictRetries {
		kv, pdb, err := s.budgetOf(ctx, pod)
		if err != nil || pdb == nil {
			return err
		}
		if !podReady(pod) && freeForUnhealthy(pdb) {
			return nil
		}
		if err := check(pdb); err != nil {
			return err
		}
		if dryRun {
			return nil
		}
		if err := s.record(ctx, kv, pod.Name); errors.Is(err, storage.ErrConflict) {
			continue
		} else if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("record the eviction in PodDisruptionBudget %s: %w", pdb.Name, err))
		}
		return nil
	}
	return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget: too many concurrent evictions, try again", 1)
}

// budgetOf returns the only budget selecting pod (nil when none).
func (s Subresource) budgetOf(ctx context.Context, pod *corev1.Pod) (storage.KeyValue, *policyv1.PodDisruptionBudget, error) {
	res, err := s.Store.List(ctx, budgetPrefix+pod.Namespace+"/", storage.ListOptions{})
	if err != nil {
		return storage.KeyValue{}, nil, apierrors.NewInternalError(fmt.Errorf("list PodDisruptionBudgets: %w", err))
	}
	var (
		found   *policyv1.PodDisruptionBudget
		foundKV storage.KeyValue
	)
	for _, kv := range res.Items {
		pdb := &policyv1.PodDisruptionBudget{}
		if err := json.Unmarshal(kv.Value, pdb); err != nil {
			return storage.KeyValue{}, nil, apierrors.NewInternalError(fmt.Errorf("decode PodDisruptionBudget %s: %w", kv.Key, err))
		}
		sel, err := labels.FromLabelSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(pod.Labels) {
			continue
		}
		if found != nil {
			return storage.KeyValue{}, nil, apierrors.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
		}
		found, foundKV = pdb, kv
	}
	return foundKV, found, nil
}

// freeForUnhealthy reports whether an unready pod may go without spending
// the budget.
func freeForUnhealthy(pdb *policyv1.PodDisruptionBudget) bool {
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.ObservedGeneration >= pdb.Generation &&
		pdb.Status.DesiredHealthy > 0 && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy
}

// check refuses an eviction the budget does not allow.
func check(pdb *policyv1.PodDisruptionBudget) error {
	gr := api.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}
	switch {
	case pdb.Status.ObservedGeneration < pdb.Generation:
		return tooMany(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	case pdb.Status.DisruptionsAllowed < 0:
		return apierrors.NewForbidden(gr, pdb.Name, errors.New("pdb disruptions allowed is negative"))
	case len(pdb.Status.DisruptedPods) > maxDisruptedPods:
		return apierrors.NewForbidden(gr, pdb.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	case pdb.Status.DisruptionsAllowed == 0:
		return tooMany(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently",
			pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
	}
	return nil
}

// tooMany is the 429 of a refused eviction, with the budget's reason as a
// DisruptionBudget cause.
func tooMany(cause string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	err.ErrStatus.Details.Causes = []api.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: cause}}
	return err
}

// record spends one disruption of the budget stored as kv on pod, in a write
// conditioned on kv's revision.
func (s Subresource) record(ctx context.Context, kv storage.KeyValue, pod string) error {
	var obj map[string]any
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		obj["status"] = status
	}
	allowed, _ := status["disruptionsAllowed"].(float64)
	status["disruptionsAllowed"] = int64(allowed) - 1
	disrupted, _ := status["disruptedPods"].(map[string]any)
	if disrupted == nil {
		disrupted = map[string]any{}
		status["disruptedPods"] = disrupted
	}
	disrupted[pod] = s.now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err = s.Store.Update(ctx, kv.Key, b, kv.ModRevision)
	return err
}

// podReady reports whether the pod's Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
	})
}
