package client

import (
	"encoding/json"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/patch"
)

// PatchType is the media type of a patch body.
type PatchType string

// Patch types.
const (
	JSONPatchType           PatchType = "application/json-patch+json"
	MergePatchType          PatchType = "application/merge-patch+json"
	StrategicMergePatchType PatchType = "application/strategic-merge-patch+json"
	ApplyPatchType          PatchType = "application/apply-patch+yaml"
)

// Patch is a patch to send: its type and its body computed from the object
// being patched.
type Patch interface {
	Type() PatchType
	Data(obj api.Object) ([]byte, error)
}

type rawPatch struct {
	pt   PatchType
	data []byte
}

// RawPatch sends data as a patch of type pt (JSON patch, merge patch or
// strategic merge patch), whatever the object holds.
func RawPatch(pt PatchType, data []byte) Patch { return rawPatch{pt: pt, data: data} }

func (p rawPatch) Type() PatchType                 { return p.pt }
func (p rawPatch) Data(api.Object) ([]byte, error) { return p.data, nil }

// Apply sends the object passed to Patch as a server-side apply
// configuration (application/apply-patch+yaml; JSON is YAML): the fields it
// sets are the ones its field manager owns. Pass a FieldOwner (required by
// the server) and, to take fields other managers own, ForceOwnership:
//
//	c.Patch(ctx, desired, client.Apply, client.FieldOwner("my-operator"), client.ForceOwnership)
//
// Build the desired object from scratch with only the fields the manager
// cares about: every field it sends (zero values of non-omitempty fields
// included) is claimed, and fields it stops sending are removed. The client
// fills in apiVersion and kind when the object leaves them empty.
var Apply Patch = applyPatch{}

type applyPatch struct{}

func (applyPatch) Type() PatchType { return ApplyPatchType }

func (applyPatch) Data(obj api.Object) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode apply configuration: %w", err)
	}
	return b, nil
}

type mergeFrom struct {
	original   api.Object
	optimistic bool
}

// MergeFrom sends the JSON merge patch from original to the object passed to
// Patch: take a copy, modify the object, then Patch(ctx, obj, MergeFrom(copy)).
// The copy must be a deep copy (e.g. DeepCopy) of the object before the changes.
func MergeFrom(original api.Object) Patch { return mergeFrom{original: original} }

// MergeFromWithOptimisticLock is MergeFrom that also sends the original's
// resourceVersion, so the patch fails with a Conflict if the object changed since.
func MergeFromWithOptimisticLock(original api.Object) Patch {
	return mergeFrom{original: original, optimistic: true}
}

func (p mergeFrom) Type() PatchType { return MergePatchType }

func (p mergeFrom) Data(obj api.Object) ([]byte, error) {
	orig, err := jsonWithoutTypeMeta(p.original)
	if err != nil {
		return nil, err
	}
	mod, err := jsonWithoutTypeMeta(obj)
	if err != nil {
		return nil, err
	}
	data, err := patch.CreateMergePatch(orig, mod)
	if err != nil {
		return nil, fmt.Errorf("create merge patch: %w", err)
	}
	if !p.optimistic {
		return data, nil
	}
	m, err := api.DecodeMap(data)
	if err != nil {
		return nil, fmt.Errorf("create merge patch: %w", err)
	}
	api.SetNestedField(m, p.original.GetResourceVersion(), "metadata", "resourceVersion")
	return json.Marshal(m)
}

// jsonWithoutTypeMeta marshals obj without apiVersion and kind, which the client
// sets on typed objects and which would otherwise show up as spurious changes.
func jsonWithoutTypeMeta(obj api.Object) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	m, err := api.DecodeMap(b)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	return json.Marshal(m)
}
