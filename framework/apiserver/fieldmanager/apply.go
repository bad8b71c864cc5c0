package fieldmanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Apply merges the applied configuration config of manager into live (nil
// when the object does not exist yet) and returns the new object with its
// managedFields. Fields manager applied before and no longer sends are
// removed unless another manager owns them. Changing a field another manager
// owns is a conflict (a 409 Conflict Status with one cause per field) unless
// force is set, which takes the field over. changed is false when the apply
// changes nothing but the managed fields' bookkeeping (the object returned
// is then live's copy).
//
// For the "kubectl" manager, conflicts on fields that the object's
// last-applied-configuration annotation explains (client-side apply wrote
// them and they have not changed since) are not conflicts, and the
// annotation, when present, is kept in step with what was applied.
func (m *Manager) Apply(live, config map[string]any, manager string, force bool) (out map[string]any, changed bool, err error) {
	if meta, ok := config["metadata"].(map[string]any); ok {
		if v, ok := meta["managedFields"]; ok && v != nil {
			return nil, false, apierrors.NewBadRequest("metadata.managedFields must be nil")
		}
	}
	liveObj, liveMF, _ := WithoutManagedFields(m.orZero(live))
	mg, err := m.sets.decodeManaged(liveMF, true)
	if err != nil {
		return nil, false, apierrors.NewInternalError(fmt.Errorf("failed to decode managed fields: %w", err))
	}
	liveTV, err := m.typ.typed(liveObj, typed.AllowDuplicates)
	if err != nil {
		return nil, false, apierrors.NewInternalError(fmt.Errorf("failed to create typed live object: %w", err))
	}
	if len(mg.fields) == 0 {
		// What the object holds was written before anyone applied: it is
		// owned by before-first-apply, so an apply conflicts with it.
		emptyTV, err := m.typ.typed(m.typ.zero, typed.AllowDuplicates)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		bfa := m.idIn(mg, beforeFirstApply, OperationUpdate)
		fields, changed, err := m.updateTyped(emptyTV, liveTV, mg.fields, bfa)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		mg.fields = fields
		if changed {
			mg.times[bfa] = m.stamp()
		}
		m.capUpdates(mg)
	}
	configTV, err := m.typ.typed(config)
	if err != nil {
		return nil, false, &ConfigError{Err: err}
	}
	id := m.idIn(mg, manager, OperationApply)
	if manager != kubectlManager && m.unchanged(liveTV, configTV, mg, id) {
		entries, err := mg.encode()
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		out = api.DeepCopyJSON(liveObj)
		setManagedFields(out, entries)
		return out, false, nil
	}
	newTV, fields, err := m.updater.Apply(liveTV, configTV, fieldpath.APIVersion(m.apiVersion), mg.fields.Copy(), id, force)
	var conflicts merge.Conflicts
	if errors.As(err, &conflicts) && manager == kubectlManager {
		if allowed, aerr := m.allowedFromLastApplied(liveObj, liveTV); aerr == nil {
			if rest := conflictsOutside(conflicts, allowed); len(rest) == 0 {
				newTV, fields, err = m.updater.Apply(liveTV, configTV, fieldpath.APIVersion(m.apiVersion), mg.fields.Copy(), id, true)
			} else {
				err = rest
			}
		}
	}
	if errors.As(err, &conflicts) {
		return nil, false, conflictError(conflicts)
	}
	if err != nil {
		return nil, false, apierrors.NewInternalError(fmt.Errorf("failed to apply: %w", err))
	}
	mg.fields = fields
	if newTV != nil {
		mg.times[id] = m.stamp()
		out, _ = newTV.AsValue().Unstructured().(map[string]any)
		out = api.DeepCopyJSON(out)
		changed = true
	} else {
		out = api.DeepCopyJSON(liveObj)
	}
	strip(mg.fields, id)
	if manager == kubectlManager && hasLastApplied(out) {
		if err := setLastApplied(out, config); err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
	}
	entries, err := mg.encode()
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	setManagedFields(out, entries)
	return out, changed, nil
}

// ConfigError says an applied configuration does not fit the schema (a
// field it does not declare, a value of the wrong kind, duplicate keys).
// Kubernetes answers it with a 500 whose message is "failed to create typed
// patch object (NAMESPACE/NAME; GVK): " and this error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

func (e *ConfigError) Unwrap() error { return e.Err }

// conflictError is Kubernetes' Status for apply conflicts: 409 Conflict with
// one FieldManagerConflict cause per field.
func conflictError(conflicts merge.Conflicts) *apierrors.StatusError {
	cs := slices.Clone(conflicts)
	slices.SortFunc(cs, func(a, b merge.Conflict) int {
		if c := strings.Compare(a.Manager, b.Manager); c != 0 {
			return c
		}
		return a.Path.Compare(b.Path)
	})
	causes := make([]api.StatusCause, len(cs))
	for i, c := range cs {
		causes[i] = api.StatusCause{
			Type:    "FieldManagerConflict",
			Message: "conflict with " + printManager(c.Manager),
			Field:   c.Path.String(),
		}
	}
	var msg string
	if len(cs) == 1 {
		msg = fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", printManager(cs[0].Manager), cs[0].Path)
	} else {
		var lines []string
		var last string
		for i, c := range cs {
			if i == 0 || c.Manager != last {
				lines = append(lines, fmt.Sprintf("conflicts with %s:", printManager(c.Manager)))
				last = c.Manager
			}
			lines = append(lines, fmt.Sprintf("- %s", c.Path))
		}
		msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(cs), strings.Join(lines, "\n"))
	}
	return apierrors.FromStatus(api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure, Code: 409, Reason: apierrors.ReasonConflict,
		Message: msg, Details: &api.StatusDetails{Causes: causes},
	})
}

// printManager names a manager in conflict messages as Kubernetes does:
// "name" [with subresource "s"] [using apiVersion] (Update entries only).
func printManager(key string) string {
	var e struct {
		identity
		Time string `json:"time,omitempty"`
	}
	if err := json.Unmarshal([]byte(key), &e); err != nil {
		return fmt.Sprintf("%q", key)
	}
	s := fmt.Sprintf("%q", e.Manager)
	if e.Subresource != "" {
		s = fmt.Sprintf("%s with subresource %q", s, e.Subresource)
	}
	if e.Operation == OperationUpdate {
		if e.Time == "" {
			return fmt.Sprintf("%s using %s", s, e.APIVersion)
		}
		if t, err := time.Parse(time.RFC3339, e.Time); err == nil {
			return fmt.Sprintf("%s using %s at %s", s, e.APIVersion, t.UTC().Format(time.RFC3339))
		}
	}
	return s
}

func conflictsOutside(conflicts merge.Conflicts, allowed *fieldpath.Set) merge.Conflicts {
	var rest merge.Conflicts
	for _, c := range conflicts {
		if !allowed.Has(c.Path) {
			rest = append(rest, c)
		}
	}
	return rest
}

// allowedFromLastApplied is the set of fields the last-applied-configuration
// annotation of live names with the value live still has: client-side apply
// wrote them, so taking them over is the upgrade, not a conflict.
func (m *Manager) allowedFromLastApplied(live map[string]any, liveTV *typed.TypedValue) (*fieldpath.Set, error) {
	ann := api.NestedString(live, "metadata", "annotations", LastAppliedAnnotation)
	if ann == "" {
		return nil, errors.New("no last applied annotation")
	}
	last, err := api.DecodeMap([]byte(ann))
	if err != nil {
		return nil, fmt.Errorf("decode last applied: %w", err)
	}
	if av, _ := last["apiVersion"].(string); av != m.apiVersion {
		return nil, fmt.Errorf("last applied has apiVersion %q, not %q", av, m.apiVersion)
	}
	lastTV, err := m.typ.typed(last)
	if err != nil {
		return nil, fmt.Errorf("convert last applied: %w", err)
	}
	set, err := lastTV.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("field set of last applied: %w", err)
	}
	cmp, err := lastTV.Compare(liveTV)
	if err != nil {
		return nil, fmt.Errorf("compare last applied: %w", err)
	}
	return set.Difference(cmp.Modified).Difference(cmp.Added).Difference(cmp.Removed), nil
}

func hasLastApplied(obj map[string]any) bool {
	return api.NestedString(obj, "metadata", "annotations", LastAppliedAnnotation) != ""
}

// setLastApplied records config (without the annotation itself) as obj's
// last-applied-configuration.
func setLastApplied(obj, config map[string]any) error {
	c := api.DeepCopyJSON(config)
	if meta, ok := c["metadata"].(map[string]any); ok {
		if anns, ok := meta["annotations"].(map[string]any); ok {
			delete(anns, LastAppliedAnnotation)
			if len(anns) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	b, err := api.EncodeJSON(c)
	if err != nil {
		return fmt.Errorf("encode last applied: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	anns, _ := meta["annotations"].(map[string]any)
	anns[LastAppliedAnnotation] = string(b) + "\n"
	return nil
}

// unchanged reports whether applying config as manager id (whose key that
// is) would leave live and its managed fields as they are, so the whole
// apply can be skipped: manager applied exactly config's fields last time
// (nothing to prune, no ownership to take), and merging config into live
// changes no value (so nothing conflicts and the object stays). This is the
// common case of controllers and GitOps tools re-applying what they applied.
func (m *Manager) unchanged(liveTV, configTV *typed.TypedValue, mg *managed, id string) bool {
	prev, ok := mg.fields[id]
	if !ok || !prev.Applied() || string(prev.APIVersion()) != m.apiVersion {
		return false
	}
	set, err := configTV.ToFieldSet()
	if err != nil || !set.Difference(stripSet).Equals(prev.Set()) {
		return false
	}
	merged, err := liveTV.Merge(configTV)
	if err != nil {
		return false
	}
	return value.Equals(liveTV.AsValue(), merged.AsValue())
}
