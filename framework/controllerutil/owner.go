package controllerutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// ErrAlreadyOwned is matched (errors.Is) by the error SetControllerReference
// returns when the object already has another controlling owner.
var ErrAlreadyOwned = errors.New("controllerutil: object already has a controller")

// ErrInvalidOwner is matched by errors for owners that cannot own the object.
var ErrInvalidOwner = errors.New("controllerutil: invalid owner")

// AlreadyOwnedError says which controller already owns Object.
type AlreadyOwnedError struct {
	Object string
	Owner  api.OwnerReference
}

func (e *AlreadyOwnedError) Error() string {
	return fmt.Sprintf("controllerutil: object %s is already owned by another %s controller %s", e.Object, e.Owner.Kind, e.Owner.Name)
}

// Is makes errors.Is(err, ErrAlreadyOwned) hold.
func (e *AlreadyOwnedError) Is(target error) bool { return target == ErrAlreadyOwned }

// Kinder resolves an object's kind; *scheme.Scheme implements it.
type Kinder interface {
	ObjectKinds(obj any) (api.GroupVersionKind, error)
}

// SetOwnerReference adds or updates a non-controlling owner reference from obj
// to owner. An existing reference to the same owner (group, kind, name) is
// replaced, keeping its controller flag. kinds resolves the owner's kind (a
// *scheme.Scheme).
func SetOwnerReference(owner, obj api.Object, kinds Kinder) error {
	ref, err := ownerRef(owner, obj, kinds)
	if err != nil {
		return err
	}
	refs := obj.GetOwnerReferences()
	if i := indexOf(refs, ref); i >= 0 {
		ref.Controller, ref.BlockOwnerDeletion = refs[i].Controller, refs[i].BlockOwnerDeletion
	}
	upsert(obj, ref)
	return nil
}

// SetControllerReference makes owner the controlling owner of obj
// (controller: true, blockOwnerDeletion: true). It returns an
// *AlreadyOwnedError if another owner already controls obj.
func SetControllerReference(owner, obj api.Object, kinds Kinder) error {
	ref, err := ownerRef(owner, obj, kinds)
	if err != nil {
		return err
	}
	if cur := GetControllerOf(obj); cur != nil && !sameOwner(*cur, ref) {
		return &AlreadyOwnedError{Object: key(obj), Owner: *cur}
	}
	ref.Controller, ref.BlockOwnerDeletion = api.Ptr(true), api.Ptr(true)
	upsert(obj, ref)
	return nil
}

// RemoveOwnerReference removes the reference to owner and reports whether
// there was one.
func RemoveOwnerReference(owner, obj api.Object, kinds Kinder) (bool, error) {
	gvk, err := kinds.ObjectKinds(owner)
	if err != nil {
		return false, fmt.Errorf("controllerutil: kind of owner: %w", err)
	}
	ref := api.OwnerReference{APIVersion: gvk.APIVersion(), Kind: gvk.Kind, Name: owner.GetName()}
	refs := obj.GetOwnerReferences()
	i := indexOf(refs, ref)
	if i < 0 {
		return false, nil
	}
	obj.SetOwnerReferences(slices.Delete(slices.Clone(refs), i, i+1))
	return true, nil
}

// GetControllerOf returns obj's controlling owner reference, or nil.
func GetControllerOf(obj api.Object) *api.OwnerReference {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return &r
		}
	}
	return nil
}

// IsControlledBy reports whether owner is obj's controlling owner (matched by
// uid).
func IsControlledBy(obj, owner api.Object) bool {
	ref := GetControllerOf(obj)
	return ref != nil && ref.UID == owner.GetUID()
}

// NewControllerRef returns a controlling owner reference (controller and
// blockOwnerDeletion true) to owner, whose kind is gvk. Unlike
// SetControllerReference it needs no scheme, for controllers that build the
// objects they own.
func NewControllerRef(owner api.Object, gvk api.GroupVersionKind) api.OwnerReference {
	return api.OwnerReference{APIVersion: gvk.APIVersion(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: api.Ptr(true), BlockOwnerDeletion: api.Ptr(true)}
}

// OwnerReferencesPatch returns a JSON merge patch that replaces an object's
// ownerReferences with refs (none: removes them) and fails with a Conflict
// unless the object's resourceVersion is still resourceVersion: how a
// controller adopts or releases an object it read from a cache.
func OwnerReferencesPatch(resourceVersion string, refs []api.OwnerReference) (client.Patch, error) {
	var value any // null removes the field
	if len(refs) > 0 {
		value = refs
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": resourceVersion, "ownerReferences": value}})
	if err != nil {
		return nil, fmt.Errorf("controllerutil: owner references patch: %w", err)
	}
	return client.RawPatch(client.MergePatchType, body), nil
}

// HasControllerReference reports whether obj has a controlling owner.
func HasControllerReference(obj api.Object) bool { return GetControllerOf(obj) != nil }

func ownerRef(owner, obj api.Object, kinds Kinder) (api.OwnerReference, error) {
	if owner.GetName() == "" || owner.GetUID() == "" {
		return api.OwnerReference{}, fmt.Errorf("%w: owner %s has no name or uid yet (create it first)", ErrInvalidOwner, key(owner))
	}
	ons, ns := owner.GetNamespace(), obj.GetNamespace()
	if ons != "" && ns == "" {
		return api.OwnerReference{}, fmt.Errorf("%w: cluster-scoped %s cannot be owned by namespaced %s", ErrInvalidOwner, key(obj), key(owner))
	}
	if ons != "" && ons != ns {
		return api.OwnerReference{}, fmt.Errorf("%w: %s cannot be owned by %s in another namespace", ErrInvalidOwner, key(obj), key(owner))
	}
	gvk, err := kinds.ObjectKinds(owner)
	if err != nil {
		return api.OwnerReference{}, fmt.Errorf("controllerutil: kind of owner: %w", err)
	}
	return api.OwnerReference{APIVersion: gvk.APIVersion(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}, nil
}

// sameOwner compares group, kind and name (the version may differ).
func sameOwner(a, b api.OwnerReference) bool {
	ga, errA := api.ParseGroupVersion(a.APIVersion)
	gb, errB := api.ParseGroupVersion(b.APIVersion)
	return errA == nil && errB == nil && ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

func indexOf(refs []api.OwnerReference, ref api.OwnerReference) int {
	return slices.IndexFunc(refs, func(r api.OwnerReference) bool { return sameOwner(r, ref) })
}

func upsert(obj api.Object, ref api.OwnerReference) {
	refs := slices.Clone(obj.GetOwnerReferences())
	if i := indexOf(refs, ref); i >= 0 {
		refs[i] = ref
	} else {
		refs = append(refs, ref)
	}
	obj.SetOwnerReferences(refs)
}

func key(obj api.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
