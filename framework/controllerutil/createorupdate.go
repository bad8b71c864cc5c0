package controllerutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/patch"
)

// OperationResult says what CreateOrUpdate or CreateOrPatch did.
type OperationResult string

// Operation results.
const (
	OperationResultNone              OperationResult = "unchanged"
	OperationResultCreated           OperationResult = "created"
	OperationResultUpdated           OperationResult = "updated"
	OperationResultUpdatedStatus     OperationResult = "updatedStatus"
	OperationResultUpdatedStatusOnly OperationResult = "updatedStatusOnly"
)

// Client is what CreateOrUpdate needs; *client.Client implements it.
type Client interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
}

// PatchClient is what CreateOrPatch needs; *client.Client implements it.
type PatchClient interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Patch(ctx context.Context, obj api.Object, p client.Patch, opts ...client.PatchOption) error
	Status() client.StatusWriter
}

// MutateFunc sets the desired state on the object it closes over. It is called
// on the live object (or on the caller's object when it does not exist yet).
type MutateFunc func() error

// CreateOrUpdate gets obj by its key; if it does not exist it calls mutate and
// creates it, otherwise it calls mutate on the live state and updates it if
// anything changed. obj ends as the server's state.
func CreateOrUpdate(ctx context.Context, c Client, obj api.Object, mutate MutateFunc) (OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	if res, err := getOrCreate(ctx, c, key, obj, mutate); err != nil || res == OperationResultCreated {
		return res, err
	}
	before, err := json.Marshal(obj)
	if err != nil {
		return OperationResultNone, fmt.Errorf("controllerutil: encode %s: %w", key, err)
	}
	if err := callMutate(mutate, key, obj); err != nil {
		return OperationResultNone, err
	}
	after, err := json.Marshal(obj)
	if err != nil {
		return OperationResultNone, fmt.Errorf("controllerutil: encode %s: %w", key, err)
	}
	if bytes.Equal(before, after) {
		return OperationResultNone, nil
	}
	if err := c.Update(ctx, obj); err != nil {
		return OperationResultNone, err
	}
	return OperationResultUpdated, nil
}

// getCreator is the part of Client and PatchClient that getOrCreate needs.
type getCreator interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
}

// getOrCreate gets obj by key (OperationResultNone); when it does not exist
// it calls mutate and creates it (OperationResultCreated).
func getOrCreate(ctx context.Context, c getCreator, key client.ObjectKey, obj api.Object, mutate MutateFunc) (OperationResult, error) {
	err := c.Get(ctx, key, obj)
	if err == nil || !apierrors.IsNotFound(err) {
		return OperationResultNone, err
	}
	if err := callMutate(mutate, key, obj); err != nil {
		return OperationResultNone, err
	}
	if err := c.Create(ctx, obj); err != nil {
		return OperationResultNone, err
	}
	return OperationResultCreated, nil
}

// CreateOrPatch is CreateOrUpdate with merge patches: changes outside status
// are sent as one patch of the object, changes of status as one patch of the
// status subresource. The result tells which were sent.
func CreateOrPatch(ctx context.Context, c PatchClient, obj api.Object, mutate MutateFunc) (OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	if res, err := getOrCreate(ctx, c, key, obj, mutate); err != nil || res == OperationResultCreated {
		return res, err
	}
	before, err := splitStatus(obj)
	if err != nil {
		return OperationResultNone, fmt.Errorf("controllerutil: encode %s: %w", key, err)
	}
	if err := callMutate(mutate, key, obj); err != nil {
		return OperationResultNone, err
	}
	after, err := splitStatus(obj)
	if err != nil {
		return OperationResultNone, fmt.Errorf("controllerutil: encode %s: %w", key, err)
	}
	objPatch, err := mergePatch(before.rest, after.rest)
	if err != nil {
		return OperationResultNone, err
	}
	statusPatch, err := mergePatch(before.status, after.status)
	if err != nil {
		return OperationResultNone, err
	}
	result := OperationResultNone
	if objPatch != nil {
		if err := c.Patch(ctx, obj, client.RawPatch(client.MergePatchType, objPatch)); err != nil {
			return OperationResultNone, err
		}
		result = OperationResultUpdated
	}
	if statusPatch != nil {
		if err := c.Status().Patch(ctx, obj, client.RawPatch(client.MergePatchType, statusPatch)); err != nil {
			return result, err
		}
		if result == OperationResultUpdated {
			result = OperationResultUpdatedStatus
		} else {
			result = OperationResultUpdatedStatusOnly
		}
	}
	return result, nil
}

func callMutate(mutate MutateFunc, key client.ObjectKey, obj api.Object) error {
	if err := mutate(); err != nil {
		return err
	}
	if client.ObjectKeyFromObject(obj) != key {
		return fmt.Errorf("controllerutil: mutate changed the name or namespace of %s", key)
	}
	return nil
}

// parts are the JSON of an object without status ("rest") and of
// {"status": ...} alone.
type parts struct{ rest, status []byte }

func splitStatus(obj api.Object) (parts, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return parts{}, err
	}
	m, err := api.DecodeMap(b)
	if err != nil {
		return parts{}, err
	}
	st := map[string]any{}
	if s, ok := m["status"]; ok {
		st["status"] = s
	}
	delete(m, "status")
	delete(m, "apiVersion")
	delete(m, "kind")
	var p parts
	if p.rest, err = json.Marshal(m); err != nil {
		return parts{}, err
	}
	if p.status, err = json.Marshal(st); err != nil {
		return parts{}, err
	}
	return p, nil
}

// mergePatch returns the merge patch from a to b, or nil when they are equal.
func mergePatch(a, b []byte) ([]byte, error) {
	p, err := patch.CreateMergePatch(a, b)
	if err != nil {
		return nil, fmt.Errorf("controllerutil: create merge patch: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		return nil, fmt.Errorf("controllerutil: create merge patch: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return p, nil
}
